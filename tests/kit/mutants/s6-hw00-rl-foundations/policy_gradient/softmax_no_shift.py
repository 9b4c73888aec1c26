"""softmax without subtracting the maximum: exp(1000) overflows and the answer is NaN."""
BREAKS = "softmax"
NAMED_BY = ["exp без сдвига на максимум"]
import numpy as np


def softmax(z):
    e = np.exp(np.asarray(z, dtype=float))
    return e / e.sum(axis=-1, keepdims=True)


