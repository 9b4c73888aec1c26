"""The per-token KL penalty is −β·|log π − log π_ref|: a token the policy likes less than π_ref is
penalized too, although log π − log π_ref < 0 there."""
BREAKS = "token_rewards"
NAMED_BY = ["KL-штраф посчитан по |log π − log π_ref|"]
import numpy as np


def token_rewards(scores, logp, ref_logp, mask, beta):
    mask = np.asarray(mask, dtype=float)
    logp, ref_logp = np.asarray(logp, dtype=float), np.asarray(ref_logp, dtype=float)
    rewards = -beta * np.abs(logp - ref_logp) * mask  # KL-штраф на каждом токене
    last = mask.sum(axis=1).astype(int) - 1  # последний настоящий токен
    rewards[np.arange(len(last)), last] += np.asarray(scores, dtype=float)  # оценка RM — в конце ответа
    return rewards


