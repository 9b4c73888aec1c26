"""td_errors ignores last_value: the step after the last one is always worth 0."""
BREAKS = "td_errors"
NAMED_BY = ["last_value проигнорирован"]
import numpy as np


def td_errors(rewards, values, last_value, gamma):
    v = np.asarray(values, dtype=float)
    return np.asarray(rewards, dtype=float) + gamma * np.append(v[1:], 0.0) - v


