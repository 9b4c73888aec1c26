"""Advantage normalization with eps under the root: (Â − mean) / sqrt(var + eps) instead of std + eps."""
BREAKS = "normalize_advantages"
NAMED_BY = ["знаменатель sqrt(var + eps)"]
import numpy as np


def normalize_advantages(adv, eps=1e-8):
    adv = np.asarray(adv, dtype=float)
    return (adv - adv.mean()) / np.sqrt(adv.var() + eps)


