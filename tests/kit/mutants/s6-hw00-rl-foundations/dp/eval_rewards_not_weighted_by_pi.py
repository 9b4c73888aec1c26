"""Policy evaluation averages the rewards uniformly over actions (R.mean) instead of weighting them by π."""
BREAKS = "policy_evaluation"
NAMED_BY = ["награды не взвешены по π"]
import numpy as np


def policy_evaluation(P, R, policy, gamma, tol=1e-10):
    P, R, policy = _validated(P, R, policy)
    P_pi = np.einsum("sa,sat->st", policy, P)
    r_pi = R.mean(axis=1)  # the mistake
    V = np.zeros(len(r_pi))
    while True:
        V_new = r_pi + gamma * P_pi @ V
        if np.max(np.abs(V_new - V)) < tol:
            return V_new
        V = V_new


