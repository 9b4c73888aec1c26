"""Policy evaluation takes the max over actions instead of the average under π: it computes V*, not V^π."""
BREAKS = "policy_evaluation"
NAMED_BY = ["взят max по действиям (это V*, а не V^π)", "взят max по действиям, а не среднее по π"]
import numpy as np


def policy_evaluation(P, R, policy, gamma, tol=1e-10):
    P, R, policy = _validated(P, R, policy)
    V = np.zeros(P.shape[0])
    while True:
        V_new = np.max(R + gamma * P @ V, axis=1)
        if np.max(np.abs(V_new - V)) < tol:
            return V_new
        V = V_new


