"""Advantage normalization per column (axis=0) instead of over the whole batch."""
BREAKS = "normalize_advantages"
NAMED_BY = ["среднее и std по столбцам (axis=0)"]
import numpy as np


def normalize_advantages(adv, eps=1e-8):
    adv = np.asarray(adv, dtype=float)
    return (adv - adv.mean(axis=0)) / (adv.std(axis=0) + eps)


