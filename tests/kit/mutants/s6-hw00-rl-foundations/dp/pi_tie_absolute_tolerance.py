"""Policy iteration's improvement step uses an absolute tie tolerance 1e-8, without the rule's max(1, |max Q|): where
the Q values are in the thousands, an action within 0.999·10⁻⁵ of the best is a tie by the rule (the lowest index
wins), but not here. Breaks policy_iteration; rejected by «Правило равенства …»."""
BREAKS = "policy_iteration"
NAMED_BY = ["допуск 1e-8 без множителя max(1, |max Q|)"]
import numpy as np


def policy_iteration(P, R, gamma):
    P, R, _ = _validated(P, R)
    S, A = R.shape
    policy = np.full((S, A), 1.0 / A)
    while True:
        V = solve_bellman(P, R, policy, gamma) if gamma < 1 else policy_evaluation(P, R, policy, gamma)
        Q = q_from_v(P, R, V, gamma)
        is_best = Q >= Q.max(axis=1, keepdims=True) - 1e-8  # the mistake: no scaling by max(1, |max Q|)
        improved = np.eye(A)[np.argmax(is_best, axis=1)]
        if np.array_equal(improved, policy):
            return V, policy
        policy = improved
