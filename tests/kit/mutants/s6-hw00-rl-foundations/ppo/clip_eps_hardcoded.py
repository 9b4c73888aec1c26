"""The clip range is written into the code: ε = 0.2 whatever eps is passed."""
BREAKS = "ppo_clip_objective"
NAMED_BY = ["eps не используется: посчитано при ε = 0.2"]
import numpy as np


def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    ratio = np.exp(np.asarray(logp_new, dtype=float) - np.asarray(logp_old, dtype=float))
    adv = np.asarray(adv, dtype=float)
    return float(np.mean(np.minimum(ratio * adv, np.clip(ratio, 0.8, 1.2) * adv)))


