"""Value iteration runs a fixed 100 sweeps and ignores tol: at γ = 0.9 the error is still ~1e-3."""
BREAKS = "value_iteration"
NAMED_BY = ["итерации остановлены слишком рано"]  # the hint that names this mistake in the first block
import numpy as np


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    for _ in range(100):
        V = q_from_v(P, R, V, gamma).max(axis=1)
    return V, _greedy(q_from_v(P, R, V, gamma))


