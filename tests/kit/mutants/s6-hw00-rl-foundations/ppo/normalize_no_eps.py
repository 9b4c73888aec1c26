"""Advantage normalization without eps: (Â − mean) / std, so equal advantages give 0/0 = NaN."""
import numpy as np


def normalize_advantages(adv, eps=1e-8):
    adv = np.asarray(adv, dtype=float)
    return (adv - adv.mean()) / adv.std()


