"""Value iteration stops when the summed change Σ_s (V_new(s) − V(s)) is below tol, without abs: where the rewards
are negative the sum is negative after the first sweep and the loop stops at once. Breaks value_iteration; rejected
by «Сетка 4×4 (пример 4.1), каждый ход −1, γ = 1: value_iteration даёт V* …»."""
BREAKS = "value_iteration"
NAMED_BY = ["Σ(V_new − V) без модуля"]
import numpy as np


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    while True:
        V_new = q_from_v(P, R, V, gamma).max(axis=1)
        if np.sum(V_new - V) < tol:  # the mistake: a signed sum, not max|V_new − V|
            break
        V = V_new
    return V_new, _greedy(q_from_v(P, R, V_new, gamma))
