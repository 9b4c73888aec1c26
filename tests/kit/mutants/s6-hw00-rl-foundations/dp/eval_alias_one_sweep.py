"""In-place sweeps compared against an alias of the same array (V_old = V, not a copy): the change
always looks like zero, so evaluation stops after a single sweep."""
BREAKS = "policy_evaluation"
NAMED_BY = ["V_old = V — тот же массив, а не копия"]
import numpy as np


def policy_evaluation(P, R, policy, gamma, tol=1e-10):
    P, R, policy = _validated(P, R, policy)
    V = np.zeros(P.shape[0])
    while True:
        V_old = V
        for s in range(len(V)):
            V[s] = np.sum(policy[s] * (R[s] + gamma * P[s] @ V))
        if np.max(np.abs(V - V_old)) < tol:
            return V
