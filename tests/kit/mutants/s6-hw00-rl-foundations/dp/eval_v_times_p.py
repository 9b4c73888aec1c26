"""The sweep multiplies from the wrong side: V @ P_π (that is, P_πᵀ·V) instead of P_π @ V."""
BREAKS = "policy_evaluation"
NAMED_BY = ["P_π транспонирована"]
import numpy as np


def policy_evaluation(P, R, policy, gamma, tol=1e-10):
    P, R, policy = _validated(P, R, policy)
    P_pi = np.einsum("sa,sat->st", policy, P)
    r_pi = np.sum(policy * R, axis=1)
    V = np.zeros(len(r_pi))
    while True:
        V_new = r_pi + gamma * V @ P_pi  # the mistake
        if np.max(np.abs(V_new - V)) < tol:
            return V_new
        V = V_new


