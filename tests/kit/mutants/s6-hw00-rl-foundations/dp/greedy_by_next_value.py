"""The greedy policy heads for the best next state: argmax_a Σ P[s, a, s']·V(s'), the reward R[s, a] left out."""
BREAKS = "value_iteration"
NAMED_BY = ["политика выбрана по ценности следующего состояния P·V, без награды R"]
import numpy as np


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    while True:
        V_new = q_from_v(P, R, V, gamma).max(axis=1)
        if np.max(np.abs(V_new - V)) < tol:
            break
        V = V_new
    return V_new, _greedy(P @ V_new)


