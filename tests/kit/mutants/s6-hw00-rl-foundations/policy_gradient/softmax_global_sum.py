"""softmax normalises by the sum over the whole array (e / e.sum(), no axis): right for one vector, wrong for a
batch."""
BREAKS = "softmax"
NAMED_BY = ["нормировка по всему массиву, а не по каждой строке"]
import numpy as np


def softmax(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max())
    return e / e.sum()


