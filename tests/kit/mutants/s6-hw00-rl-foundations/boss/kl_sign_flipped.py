"""The KL penalty has the wrong sign: +β·(log π − log π_ref) rewards drifting away from the SFT model."""
BREAKS = "token_rewards"
NAMED_BY = ["знак KL-штрафа перевёрнут"]
import numpy as np


def token_rewards(scores, logp, ref_logp, mask, beta):
    mask = np.asarray(mask, dtype=float)
    rewards = beta * (np.asarray(logp, dtype=float) - np.asarray(ref_logp, dtype=float)) * mask
    last = mask.sum(axis=1).astype(int) - 1
    rewards[np.arange(len(last)), last] += np.asarray(scores, dtype=float)
    return rewards


