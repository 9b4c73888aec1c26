"""The sweep writes into a copy and never assigns it back (V = V_new is missing): the change never
shrinks and the loop never ends."""
BREAKS = "policy_evaluation"
NAMED_BY = ["в каждом проходе V должна меняться"]  # the hint that names this mistake in the first block
import numpy as np


def policy_evaluation(P, R, policy, gamma, tol=1e-10):
    P, R, policy = _validated(P, R, policy)
    V = np.zeros(P.shape[0])
    while True:
        V_new = V.copy()
        for s in range(len(V)):
            V_new[s] = np.sum(policy[s] * (R[s] + gamma * P[s] @ V))
        if np.max(np.abs(V_new - V)) < tol:
            return V_new


