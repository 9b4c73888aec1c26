"""normalize_advantages works in place and changes the caller's array."""
BREAKS = "normalize_advantages"
NAMED_BY = ["изменила аргумент `adv` на месте"]
import numpy as np


def normalize_advantages(adv, eps=1e-8):
    adv = np.asarray(adv, dtype=float)
    adv -= adv.mean()
    adv /= adv.std() + eps
    return adv


