"""Policy iteration always evaluates with the linear system, also at γ = 1, where I − P_π is singular
(the absorbing states' rows are zero): solve_bellman raises ValueError on the 4×3 world."""
BREAKS = "policy_iteration"
NAMED_BY = ["при γ = 1 система (I − P_π)V = r_π вырождена"]  # the hint that names this mistake in the first block
import numpy as np


def policy_iteration(P, R, gamma):
    P, R, _ = _validated(P, R)
    S, A = R.shape
    policy = np.full((S, A), 1.0 / A)
    while True:
        V = solve_bellman(P, R, policy, gamma)  # the mistake: no policy_evaluation at γ = 1
        improved = _greedy(q_from_v(P, R, V, gamma))
        if np.array_equal(improved, policy):
            return V, policy
        policy = improved


