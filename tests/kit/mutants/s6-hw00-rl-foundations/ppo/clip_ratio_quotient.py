"""ρ computed as a quotient of probabilities, exp(logp_new) / exp(logp_old): where log π < −745 both exponentials are 0
in float64 and ρ = 0/0 = NaN. The lesson's ρ = exp(logp_new − logp_old) stays finite."""
BREAKS = "ppo_clip_objective"
NAMED_BY = ["ρ посчитано как частное exp(logp_new) / exp(logp_old)"]
import numpy as np


def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.exp(np.asarray(logp_new, dtype=float)) / np.exp(np.asarray(logp_old, dtype=float))  # the mistake
    adv = np.asarray(adv, dtype=float)
    return float(np.mean(np.minimum(ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv)))
