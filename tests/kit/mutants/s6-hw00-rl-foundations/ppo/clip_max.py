"""max instead of min in the clipped objective: the optimistic bound."""
BREAKS = "ppo_clip_objective"
NAMED_BY = ["max вместо min"]
import numpy as np


def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    ratio = np.exp(np.asarray(logp_new, dtype=float) - np.asarray(logp_old, dtype=float))
    adv = np.asarray(adv, dtype=float)
    return float(np.mean(np.maximum(ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv)))


