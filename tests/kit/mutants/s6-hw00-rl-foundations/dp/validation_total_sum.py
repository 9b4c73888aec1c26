"""Validation compares the sum of all of P with S·A (and of policy with S) instead of each row with 1: two rows that
are wrong in opposite directions (1.25 and 0.75) pass, as long as the total is right."""
BREAKS = ("solve_bellman", "policy_evaluation", "q_from_v", "value_iteration", "policy_iteration")
NAMED_BY = []
import numpy as np


def _validated(P, R, policy=None):
    P = np.asarray(P, dtype=float)
    R = np.asarray(R, dtype=float)
    if P.ndim != 3 or P.shape[0] != P.shape[2]:
        raise ValueError(f"P должна иметь форму [S, A, S], а имеет {P.shape}")
    if R.shape != P.shape[:2]:
        raise ValueError(f"R должна иметь форму [S, A] = {P.shape[:2]}, а имеет {R.shape}")
    S, A = R.shape
    if np.any(P < 0) or not np.isclose(P.sum(), S * A, atol=1e-6):  # the mistake: the total, not each row
        raise ValueError("строки P должны быть распределениями")
    if policy is None:
        return P, R, None
    policy = np.asarray(policy, dtype=float)
    if policy.shape != R.shape:
        raise ValueError(f"policy должна иметь форму [S, A] = {R.shape}, а имеет {policy.shape}")
    if np.any(policy < 0) or not np.isclose(policy.sum(), S, atol=1e-6):  # the mistake: the total, not each row
        raise ValueError("строки policy должны быть распределениями")
    return P, R, policy
