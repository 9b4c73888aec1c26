"""The score always goes to position L − 1, even when the answer ended earlier (into the padding)."""
BREAKS = "token_rewards"
NAMED_BY = ["оценка всегда на последней позиции L − 1"]
import numpy as np


def token_rewards(scores, logp, ref_logp, mask, beta):
    mask = np.asarray(mask, dtype=float)
    rewards = -beta * (np.asarray(logp, dtype=float) - np.asarray(ref_logp, dtype=float)) * mask
    rewards[:, -1] += np.asarray(scores, dtype=float)
    return rewards


