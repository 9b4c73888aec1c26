"""c_v and c_e swapped: the critic's error is weighted by c_e and the entropy by c_v."""
BREAKS = "ppo_loss"
NAMED_BY = ["c_v и c_e перепутаны"]
import numpy as np


def ppo_loss(logp_new, logp_old, adv, values_pred, returns, entropy, eps=0.2, c_v=0.5, c_e=0.01):
    obj = ppo_clip_objective(logp_new, logp_old, adv, eps)
    err = np.asarray(values_pred, dtype=float) - np.asarray(returns, dtype=float)
    return float(-obj + c_e * np.mean(err ** 2) - c_v * np.mean(entropy))


