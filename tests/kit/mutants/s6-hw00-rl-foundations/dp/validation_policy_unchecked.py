"""Validation checks P and the shapes, but not that the policy's rows are distributions."""
BREAKS = ("solve_bellman", "policy_evaluation")
NAMED_BY = ["строки policy — распределения"]  # the hint that names this mistake in the first block
import numpy as np


def _validated(P, R, policy=None):
    P = np.asarray(P, dtype=float)
    R = np.asarray(R, dtype=float)
    if P.ndim != 3 or P.shape[0] != P.shape[2]:
        raise ValueError(f"P должна иметь форму [S, A, S], а имеет {P.shape}")
    if R.shape != P.shape[:2]:
        raise ValueError(f"R должна иметь форму [S, A] = {P.shape[:2]}, а имеет {R.shape}")
    if np.any(P < 0) or not np.allclose(P.sum(axis=2), 1.0, atol=1e-6):
        raise ValueError("строки P должны быть распределениями")
    if policy is None:
        return P, R, None
    policy = np.asarray(policy, dtype=float)
    if policy.shape != R.shape:
        raise ValueError(f"policy должна иметь форму [S, A] = {R.shape}, а имеет {policy.shape}")
    return P, R, policy  # the mistake: the rows of policy are not checked


