"""value_iteration returns the table Q [S, A] in place of V = max_a Q [S]."""
BREAKS = "value_iteration"
NAMED_BY = ["вернули Q(s, a) формы [S, A]"]  # the hint that names this mistake in the first block
import numpy as np


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    while True:
        Q = q_from_v(P, R, V, gamma)
        V_new = Q.max(axis=1)
        if np.max(np.abs(V_new - V)) < tol:
            break
        V = V_new
    Q = q_from_v(P, R, V_new, gamma)
    return Q, _greedy(Q)


