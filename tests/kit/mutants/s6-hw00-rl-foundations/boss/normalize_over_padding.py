"""Advantages are normalized over every position of the minibatch, padded tokens (zeros) included."""
BREAKS = "masked_normalize"
NAMED_BY = ["нормировали по всем позициям, вместе с паддингом"]
import numpy as np


def masked_normalize(x, mask, eps=1e-8):
    x, mask = np.asarray(x, dtype=float), np.asarray(mask, dtype=float)
    return (x - x.mean()) / (x.std() + eps) * mask


