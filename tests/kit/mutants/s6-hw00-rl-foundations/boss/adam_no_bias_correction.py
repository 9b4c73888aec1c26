"""Adam without the bias correction 1 − β^t: the first steps are far too small (and m/√v ≠ sign(g))."""
BREAKS = "adam_step"
NAMED_BY = ["нет поправки смещения (1 − β^t)"]
import numpy as np


def adam_step(param, grad, m, v, t, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    grad = np.asarray(grad, dtype=float)
    m = beta1 * np.asarray(m, dtype=float) + (1 - beta1) * grad
    v = beta2 * np.asarray(v, dtype=float) + (1 - beta2) * grad ** 2
    return np.asarray(param, dtype=float) - lr * m / (np.sqrt(v) + eps), m, v


