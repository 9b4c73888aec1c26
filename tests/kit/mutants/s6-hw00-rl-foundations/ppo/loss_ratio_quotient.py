"""ppo_loss computes the clipped objective itself, with ρ as a quotient exp(logp_new) / exp(logp_old): where log π <
−745 it is 0/0 = NaN (its ppo_clip_objective is right, but the loss does not use it)."""
BREAKS = "ppo_loss"
NAMED_BY = ["ρ посчитано как частное exp(logp_new) / exp(logp_old)"]
import numpy as np


def ppo_loss(logp_new, logp_old, adv, values_pred, returns, entropy, eps=0.2, c_v=0.5, c_e=0.01):
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.exp(np.asarray(logp_new, dtype=float)) / np.exp(np.asarray(logp_old, dtype=float))  # the mistake
    adv = np.asarray(adv, dtype=float)
    objective = np.mean(np.minimum(ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv))
    errors = np.asarray(values_pred, dtype=float) - np.asarray(returns, dtype=float)
    return float(-objective + c_v * np.mean(errors ** 2) - c_e * np.mean(np.asarray(entropy, dtype=float)))
