"""γ is applied to the rewards too: the system is solved as (I − γP_π)V = γ·r_π, so every value comes out
γ times too small."""
BREAKS = "solve_bellman"
NAMED_BY = ["γ умножает и награду: (I − γP_π)V = γ·r_π"]
import numpy as np


def solve_bellman(P, R, policy, gamma):
    P, R, policy = _validated(P, R, policy)
    P_pi = np.einsum("sa,sat->st", policy, P)
    r_pi = np.sum(policy * R, axis=1)
    return np.linalg.solve(np.eye(len(r_pi)) - gamma * P_pi, gamma * r_pi)


