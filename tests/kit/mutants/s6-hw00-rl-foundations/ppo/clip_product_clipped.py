"""The product ρ·Â is clipped to [1 − ε, 1 + ε] instead of the ratio ρ alone."""
BREAKS = "ppo_clip_objective"
NAMED_BY = ["клиппировано произведение ρ·Â"]
import numpy as np


def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    ratio = np.exp(np.asarray(logp_new, dtype=float) - np.asarray(logp_old, dtype=float))
    adv = np.asarray(adv, dtype=float)
    return float(np.mean(np.minimum(ratio * adv, np.clip(ratio * adv, 1 - eps, 1 + eps))))


