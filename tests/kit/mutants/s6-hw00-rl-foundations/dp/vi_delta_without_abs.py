"""Value iteration's stop rule has no abs: delta = max(V_new − V). Where every reward is negative, V only falls,
delta ≤ 0 < tol after the first sweep, and the loop stops with V = max_a R. Breaks value_iteration; rejected by
«Сетка 4×4 (пример 4.1), каждый ход −1, γ = 1: value_iteration даёт V* …»."""
BREAKS = "value_iteration"
NAMED_BY = ["max(V_new − V)"]
import numpy as np


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    while True:
        V_new = q_from_v(P, R, V, gamma).max(axis=1)
        if np.max(V_new - V) < tol:  # the mistake: max(V_new − V), not max|V_new − V|
            break
        V = V_new
    return V_new, _greedy(q_from_v(P, R, V_new, gamma))
