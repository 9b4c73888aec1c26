"""In-place value iteration compared against an alias (V_old = V, not a copy): the change always looks like
zero, so it stops after one sweep with V = max_a R."""
BREAKS = "value_iteration"
NAMED_BY = ["V_old = V — тот же массив, а не копия"]
import numpy as np


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    while True:
        V_old = V
        for s in range(len(V)):
            V[s] = np.max(R[s] + gamma * P[s] @ V)
        if np.max(np.abs(V - V_old)) < tol:
            break
    return V, _greedy(q_from_v(P, R, V, gamma))


