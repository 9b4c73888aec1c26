"""Validation checks that the rows of P and policy sum to 1 but lets negative probabilities through."""
BREAKS = ("solve_bellman", "policy_evaluation", "q_from_v", "value_iteration", "policy_iteration")
NAMED_BY = ["вероятности ещё и неотрицательны"]  # the hint that names this mistake in the first block
import numpy as np


def _validated(P, R, policy=None):
    P = np.asarray(P, dtype=float)
    R = np.asarray(R, dtype=float)
    if P.ndim != 3 or P.shape[0] != P.shape[2]:
        raise ValueError(f"P должна иметь форму [S, A, S], а имеет {P.shape}")
    if R.shape != P.shape[:2]:
        raise ValueError(f"R должна иметь форму [S, A] = {P.shape[:2]}, а имеет {R.shape}")
    if not np.allclose(P.sum(axis=2), 1.0, atol=1e-6):  # the mistake: no P >= 0
        raise ValueError("строки P должны давать в сумме 1")
    if policy is None:
        return P, R, None
    policy = np.asarray(policy, dtype=float)
    if policy.shape != R.shape:
        raise ValueError(f"policy должна иметь форму [S, A] = {R.shape}, а имеет {policy.shape}")
    if not np.allclose(policy.sum(axis=1), 1.0, atol=1e-6):  # the mistake: no policy >= 0
        raise ValueError("строки policy должны давать в сумме 1")
    return P, R, policy


