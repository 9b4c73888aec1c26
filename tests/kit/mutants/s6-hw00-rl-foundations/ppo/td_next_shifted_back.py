"""td_errors takes the "next" value from the wrong side: V(s_{t−1}) (last_value prepended) instead of V(s_{t+1})."""
BREAKS = "td_errors"
NAMED_BY = ["следующая ценность взята со сдвигом не в ту сторону"]
import numpy as np


def td_errors(rewards, values, last_value, gamma):
    r, v = np.asarray(rewards, dtype=float), np.asarray(values, dtype=float)
    return r + gamma * np.append(float(last_value), v[:-1]) - v


