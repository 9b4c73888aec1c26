"""Policy iteration starts from "always action 0" instead of the equiprobable policy: at γ = 1, where that policy
never ends the episode (action 0 stays put at a cost), its evaluation never converges."""
BREAKS = "policy_iteration"
NAMED_BY = []
import numpy as np


def policy_iteration(P, R, gamma):
    P, R, _ = _validated(P, R)
    S, A = R.shape
    policy = np.zeros((S, A))
    policy[:, 0] = 1.0  # the mistake: "always action 0", not all π(a|s) = 1/A
    while True:
        V = solve_bellman(P, R, policy, gamma) if gamma < 1 else policy_evaluation(P, R, policy, gamma)
        improved = _greedy(q_from_v(P, R, V, gamma))
        if np.array_equal(improved, policy):
            return V, policy
        policy = improved
