"""No input validation: P whose rows do not sum to 1 is accepted silently."""
BREAKS = ("solve_bellman", "policy_evaluation", "q_from_v", "value_iteration", "policy_iteration")
NAMED_BY = ["проверьте в начале функции, что P ≥ 0"]  # the hint that names this mistake in the first block
import numpy as np


def _validated(P, R, policy=None):
    P = np.asarray(P, dtype=float)
    R = np.asarray(R, dtype=float)
    return P, R, None if policy is None else np.asarray(policy, dtype=float)


