"""Advantage normalization with the sample std (ddof=1, as torch.std) instead of NumPy's default."""
BREAKS = "normalize_advantages"
NAMED_BY = ["std с ddof = 1"]
import numpy as np


def normalize_advantages(adv, eps=1e-8):
    adv = np.asarray(adv, dtype=float)
    return (adv - adv.mean()) / (adv.std(ddof=1) + eps)


