"""Policy iteration improves with a bare np.argmax (no tolerance for ties). On the 5×5 grid world tied actions
differ only by rounding error, and whether the choice keeps flipping forever depends on the BLAS kernel; the
tie-rule check catches it on every machine (an action better by only 1e-10 is taken)."""
BREAKS = "policy_iteration"
NAMED_BY = ["голый np.argmax (или допуск меньше 10⁻¹⁰)"]
import numpy as np


def policy_iteration(P, R, gamma):
    P, R, _ = _validated(P, R)
    S, A = R.shape
    policy = np.full((S, A), 1.0 / A)
    while True:
        V = solve_bellman(P, R, policy, gamma) if gamma < 1 else policy_evaluation(P, R, policy, gamma)
        improved = np.eye(A)[np.argmax(q_from_v(P, R, V, gamma), axis=1)]
        if np.array_equal(improved, policy):
            return V, policy
        policy = improved


