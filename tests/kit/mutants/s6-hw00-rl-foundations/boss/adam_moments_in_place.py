"""adam_step updates the moments in place (`m *= β1; m += (1 − β1)·g`): the caller's opt["m_theta"] and the
arrays passed in change behind its back."""
BREAKS = "adam_step"
NAMED_BY = ["изменила аргумент `m` на месте"]
import numpy as np


def adam_step(param, grad, m, v, t, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    grad = np.asarray(grad, dtype=float)
    m *= beta1
    m += (1 - beta1) * grad
    v *= beta2
    v += (1 - beta2) * grad ** 2
    m_hat, v_hat = m / (1 - beta1 ** t), v / (1 - beta2 ** t)
    return np.asarray(param, dtype=float) - lr * m_hat / (np.sqrt(v_hat) + eps), m, v


