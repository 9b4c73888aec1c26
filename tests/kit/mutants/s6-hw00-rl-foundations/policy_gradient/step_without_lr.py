"""The REINFORCE step forgets the learning rate: z + (G − b)·∇ log π."""
BREAKS = "reinforce_step"
NAMED_BY = ["шаг без α"]
import numpy as np


def reinforce_step(z, a, G, lr, baseline=0.0):
    z = np.asarray(z, dtype=float)
    return z + (G - baseline) * grad_log_softmax(z, a)


