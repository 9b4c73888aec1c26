"""The REINFORCE step goes down the gradient (z − α·(G − b)·∇ log π) instead of up."""
BREAKS = "reinforce_step"
NAMED_BY = ["градиентный спуск вместо подъёма"]
import numpy as np


def reinforce_step(z, a, G, lr, baseline=0.0):
    z = np.asarray(z, dtype=float)
    return z - lr * (G - baseline) * grad_log_softmax(z, a)


