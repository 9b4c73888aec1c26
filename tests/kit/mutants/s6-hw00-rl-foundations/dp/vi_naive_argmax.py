"""Value iteration's greedy policy is a bare np.argmax: no tolerance, so of two actions within 1e-8 of each
other it takes the one that is larger by rounding-sized amounts, not the lowest index the tie rule asks for."""
BREAKS = "value_iteration"
NAMED_BY = ["голый np.argmax без допуска"]
import numpy as np


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    while True:
        V_new = q_from_v(P, R, V, gamma).max(axis=1)
        if np.max(np.abs(V_new - V)) < tol:
            break
        V = V_new
    Q = q_from_v(P, R, V_new, gamma)
    return V_new, np.eye(Q.shape[1])[np.argmax(Q, axis=1)]


