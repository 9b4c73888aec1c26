"""The clipped objective takes min for Â ≥ 0 but max for Â < 0 (as if the sign of Â flipped the pessimistic bound):
the answer is min(ρ, clip(ρ))·Â on every input, the same as taking min of ρ and clip(ρ) themselves, so the name says
both ways of writing it."""
BREAKS = "ppo_clip_objective"
NAMED_BY = ["min при Â ≥ 0 и max при Â < 0"]
import numpy as np


def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    ratio = np.exp(np.asarray(logp_new, dtype=float) - np.asarray(logp_old, dtype=float))
    adv = np.asarray(adv, dtype=float)
    unclipped, clipped = ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv
    return float(np.mean(np.where(adv >= 0, np.minimum(unclipped, clipped), np.maximum(unclipped, clipped))))
