"""td_errors builds δ in the rewards array (r += γ·V(s_{t+1}); r −= V): np.asarray makes no copy of a float64 array,
so the caller's rewards become the TD errors. Breaks td_errors; rejected by «Робот-курьер: TD-ошибки δ = [0.35, −0.6,
1.0] …», which now also passes float64 arrays and checks that they are left unchanged."""
BREAKS = "td_errors"
NAMED_BY = ["изменила аргумент `rewards` на месте"]  # the hint that names this mistake in the first block
import numpy as np


def td_errors(rewards, values, last_value, gamma):
    r = np.asarray(rewards, dtype=float)  # the mistake: for float64 this is the caller's array
    v = np.asarray(values, dtype=float)
    r += gamma * np.append(v[1:], float(last_value))
    r -= v
    return r
