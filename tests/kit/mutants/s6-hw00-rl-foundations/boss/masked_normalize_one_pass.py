"""masked_normalize takes the variance in one pass, E[Â²] − E[Â]² over the real tokens: right on small advantages, but
with a common offset of 10⁸ both terms are near 10¹⁶ and their difference keeps none of a spread of a few units."""
BREAKS = "masked_normalize"
NAMED_BY = []
import numpy as np


def masked_normalize(x, mask, eps=1e-8):
    x, mask = np.asarray(x, dtype=float), np.asarray(mask, dtype=float)
    n = mask.sum()
    mean = (x * mask).sum() / n
    var = (x ** 2 * mask).sum() / n - mean ** 2  # the mistake: cancels when the mean is large
    with np.errstate(invalid="ignore"):
        return (x - mean) / (np.sqrt(var) + eps) * mask
