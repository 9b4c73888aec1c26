"""The linear system is built with P_π transposed: (I − γP_πᵀ)V = r_π."""
BREAKS = "solve_bellman"
NAMED_BY = ["P_π транспонирована"]
import numpy as np


def solve_bellman(P, R, policy, gamma):
    P, R, policy = _validated(P, R, policy)
    P_pi = np.einsum("sa,sat->st", policy, P)
    r_pi = np.sum(policy * R, axis=1)
    return np.linalg.solve(np.eye(len(r_pi)) - gamma * P_pi.T, r_pi)


