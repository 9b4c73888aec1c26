"""adam_step returns the bias-corrected m̂ and v̂ as the new moments: the next step corrects them again."""
BREAKS = "adam_step"
NAMED_BY = ["вернули поправленный m̂ вместо момента m"]
import numpy as np


def adam_step(param, grad, m, v, t, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    grad = np.asarray(grad, dtype=float)
    m = beta1 * np.asarray(m, dtype=float) + (1 - beta1) * grad
    v = beta2 * np.asarray(v, dtype=float) + (1 - beta2) * grad ** 2
    m_hat, v_hat = m / (1 - beta1 ** t), v / (1 - beta2 ** t)
    return np.asarray(param, dtype=float) - lr * m_hat / (np.sqrt(v_hat) + eps), m_hat, v_hat


