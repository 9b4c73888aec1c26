"""masked_normalize normalizes each answer on its own (mean and std along axis 1) instead of over all the
real tokens of the minibatch."""
BREAKS = "masked_normalize"
NAMED_BY = ["mean и std — по каждому ответу отдельно"]
import numpy as np


def masked_normalize(x, mask, eps=1e-8):
    x, mask = np.asarray(x, dtype=float), np.asarray(mask, dtype=float)
    n = mask.sum(axis=1, keepdims=True)
    mean = (x * mask).sum(axis=1, keepdims=True) / n
    std = np.sqrt((((x - mean) * mask) ** 2).sum(axis=1, keepdims=True) / n)
    return (x - mean) / (std + eps) * mask


