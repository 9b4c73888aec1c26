"""masked_normalize takes the sample std (ddof = 1) of the real tokens instead of ddof = 0."""
BREAKS = "masked_normalize"
NAMED_BY = ["std с ddof = 1"]
import numpy as np


def masked_normalize(x, mask, eps=1e-8):
    x, mask = np.asarray(x, dtype=float), np.asarray(mask, dtype=float)
    n = mask.sum()
    mean = (x * mask).sum() / n
    std = np.sqrt((((x - mean) * mask) ** 2).sum() / (n - 1))
    return (x - mean) / (std + eps) * mask


