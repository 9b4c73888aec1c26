"""td_errors forgets the discount: δ_t = r_t + V(s_{t+1}) − V(s_t)."""
BREAKS = "td_errors"
NAMED_BY = ["γ не умножен на V(s_{t+1})"]
import numpy as np


def td_errors(rewards, values, last_value, gamma):
    r, v = np.asarray(rewards, dtype=float), np.asarray(values, dtype=float)
    return r + np.append(v[1:], float(last_value)) - v


