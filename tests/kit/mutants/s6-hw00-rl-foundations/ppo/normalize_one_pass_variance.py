"""Advantage normalization with the variance in one pass, E[Â²] − E[Â]²: right on small advantages, but with a common
offset of 10⁸ both terms are near 10¹⁶ and their difference keeps none of a spread of a few units (or goes negative:
the root is NaN)."""
BREAKS = "normalize_advantages"
NAMED_BY = []
import numpy as np


def normalize_advantages(adv, eps=1e-8):
    adv = np.asarray(adv, dtype=float)
    mean = adv.mean()
    var = np.mean(adv ** 2) - mean ** 2  # the mistake: cancels when the mean is large
    with np.errstate(invalid="ignore"):
        return (adv - mean) / (np.sqrt(var) + eps)
