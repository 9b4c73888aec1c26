"""The ratio is inverted: ρ = exp(logp_old − logp_new) = π_old / π_new."""
BREAKS = "ppo_clip_objective"
NAMED_BY = ["ρ перевёрнуто: exp(logp_old − logp_new)"]
import numpy as np


def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    ratio = np.exp(np.asarray(logp_old, dtype=float) - np.asarray(logp_new, dtype=float))
    adv = np.asarray(adv, dtype=float)
    return float(np.mean(np.minimum(ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv)))


