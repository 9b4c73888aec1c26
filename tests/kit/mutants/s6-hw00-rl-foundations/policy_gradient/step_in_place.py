"""reinforce_step updates the caller's logits in place (z += ...) instead of returning a new array."""
BREAKS = "reinforce_step"
NAMED_BY = ["изменила аргумент `z` на месте"]
import numpy as np


def reinforce_step(z, a, G, lr, baseline=0.0):
    z = np.asarray(z)
    z += lr * (G - baseline) * grad_log_softmax(z, a)
    return z


