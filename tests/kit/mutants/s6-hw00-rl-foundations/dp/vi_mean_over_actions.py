"""Value iteration backs up the mean over actions instead of the max: it evaluates the equiprobable policy."""
BREAKS = "value_iteration"
NAMED_BY = ["в value iteration взято среднее по действиям, а не max_a"]
import numpy as np


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    while True:
        V_new = q_from_v(P, R, V, gamma).mean(axis=1)  # the mistake: mean, not max
        if np.max(np.abs(V_new - V)) < tol:
            break
        V = V_new
    return V_new, _greedy(q_from_v(P, R, V_new, gamma))


