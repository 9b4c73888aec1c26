"""reinforce_step accepts a baseline but never subtracts it: the weight is G, not G − b."""
BREAKS = "reinforce_step"
NAMED_BY = ["baseline не учтён"]
import numpy as np


def reinforce_step(z, a, G, lr, baseline=0.0):
    z = np.asarray(z, dtype=float)
    return z + lr * G * grad_log_softmax(z, a)


