"""The reward model's score is added to the first token of the answer instead of the last real one."""
BREAKS = "token_rewards"
NAMED_BY = ["оценка на первом токене ответа"]
import numpy as np


def token_rewards(scores, logp, ref_logp, mask, beta):
    mask = np.asarray(mask, dtype=float)
    rewards = -beta * (np.asarray(logp, dtype=float) - np.asarray(ref_logp, dtype=float)) * mask
    rewards[:, 0] += np.asarray(scores, dtype=float)
    return rewards


