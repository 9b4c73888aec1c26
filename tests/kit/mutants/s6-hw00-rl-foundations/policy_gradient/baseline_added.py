"""The baseline is added to the return (G + b) instead of subtracted."""
BREAKS = "reinforce_step"
NAMED_BY = ["baseline прибавлен, а не вычтен"]
import numpy as np


def reinforce_step(z, a, G, lr, baseline=0.0):
    z = np.asarray(z, dtype=float)
    return z + lr * (G + baseline) * grad_log_softmax(z, a)


