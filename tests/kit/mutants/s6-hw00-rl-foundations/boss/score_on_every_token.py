"""The reward model's score is added to every token of the answer, not only to the last real one."""
BREAKS = "token_rewards"
NAMED_BY = ["оценка RM прибавлена к каждому токену ответа"]
import numpy as np


def token_rewards(scores, logp, ref_logp, mask, beta):
    mask = np.asarray(mask, dtype=float)
    logp, ref_logp = np.asarray(logp, dtype=float), np.asarray(ref_logp, dtype=float)
    rewards = -beta * (logp - ref_logp) * mask  # KL-штраф на каждом токене
    last = mask.sum(axis=1).astype(int) - 1  # последний настоящий токен
    rewards += np.asarray(scores, dtype=float)[:, None] * mask  # оценка RM — в конце ответа
    return rewards


