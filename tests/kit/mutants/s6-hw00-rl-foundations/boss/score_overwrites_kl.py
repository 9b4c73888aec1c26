"""The score is written over the last token's reward with `=` instead of added to its KL penalty: the
last token's penalty is lost."""
BREAKS = "token_rewards"
NAMED_BY = ["оценка RM записана поверх KL-штрафа последнего токена"]
import numpy as np


def token_rewards(scores, logp, ref_logp, mask, beta):
    mask = np.asarray(mask, dtype=float)
    logp, ref_logp = np.asarray(logp, dtype=float), np.asarray(ref_logp, dtype=float)
    rewards = -beta * (logp - ref_logp) * mask  # KL-штраф на каждом токене
    last = mask.sum(axis=1).astype(int) - 1  # последний настоящий токен
    rewards[np.arange(len(last)), last] = np.asarray(scores, dtype=float)  # оценка RM — в конце ответа
    return rewards


