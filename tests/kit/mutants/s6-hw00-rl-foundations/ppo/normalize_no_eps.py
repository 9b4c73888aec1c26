"""Advantage normalization without eps: (Â − mean) / std, so equal advantages give 0/0 = NaN."""
BREAKS = "normalize_advantages"
NAMED_BY = ["eps не прибавлен к std"]
import numpy as np


def normalize_advantages(adv, eps=1e-8):
    adv = np.asarray(adv, dtype=float)
    return (adv - adv.mean()) / adv.std()


