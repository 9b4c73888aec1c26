"""The greedy policy is taken by the immediate reward R alone (the future γ·P·V is forgotten)."""
BREAKS = "value_iteration"
NAMED_BY = ["политика выбрана по одной награде R, без γ·P·V"]
import numpy as np


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    while True:
        V_new = q_from_v(P, R, V, gamma).max(axis=1)
        if np.max(np.abs(V_new - V)) < tol:
            break
        V = V_new
    return V_new, _greedy(R)


