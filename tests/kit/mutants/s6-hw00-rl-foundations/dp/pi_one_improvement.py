"""Policy iteration stops after the first improvement step instead of iterating until the policy is stable."""
BREAKS = "policy_iteration"
NAMED_BY = ["policy iteration остановилась после первого улучшения"]
import numpy as np


def policy_iteration(P, R, gamma):
    P, R, _ = _validated(P, R)
    S, A = R.shape
    policy = np.full((S, A), 1.0 / A)
    V = solve_bellman(P, R, policy, gamma) if gamma < 1 else policy_evaluation(P, R, policy, gamma)
    policy = _greedy(q_from_v(P, R, V, gamma))
    return V, policy
