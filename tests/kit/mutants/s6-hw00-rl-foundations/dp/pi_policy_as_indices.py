"""policy_iteration returns the policy as a vector of action numbers [S] (argmax indices), not one-hot rows [S, A]."""
BREAKS = "policy_iteration"
NAMED_BY = ["вернули номера действий"]  # the hint that names this mistake in the first block
import numpy as np


def policy_iteration(P, R, gamma):
    P, R, _ = _validated(P, R)
    S, A = R.shape
    policy = np.full((S, A), 1.0 / A)
    while True:
        V = solve_bellman(P, R, policy, gamma) if gamma < 1 else policy_evaluation(P, R, policy, gamma)
        improved = _greedy(q_from_v(P, R, V, gamma))
        if np.array_equal(improved, policy):
            return V, np.argmax(policy, axis=1)
        policy = improved


