"""softmax normalises over the first axis (columns of a batch) instead of the last one."""
BREAKS = "softmax"
NAMED_BY = ["нормировка по первой оси"]
import numpy as np


def softmax(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


