"""The ratio is taken as logp_new − logp_old, without exp."""
BREAKS = "ppo_clip_objective"
NAMED_BY = ["ρ = logp_new − logp_old без exp"]
import numpy as np


def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    ratio = np.asarray(logp_new, dtype=float) - np.asarray(logp_old, dtype=float)
    adv = np.asarray(adv, dtype=float)
    return float(np.mean(np.minimum(ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv)))


