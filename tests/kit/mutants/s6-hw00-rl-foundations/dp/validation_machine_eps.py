"""Validation allows the row sums to differ from 1 by machine epsilon only (|sum − 1| ≤ np.finfo(float).eps): rows
of float32 probabilities ([0.6, 0.3, 0.1] in float32 sums to 1 + 3.7·10⁻⁸ in float64) are wrongly rejected. Breaks all
five functions of dp; rejected by «Плохой вход: строки P или policy — не распределения …», which now also passes such
rows and expects no ValueError."""
BREAKS = ("solve_bellman", "policy_evaluation", "q_from_v", "value_iteration", "policy_iteration")
NAMED_BY = ["сравнивайте суммы строк с 1 с допуском"]  # the hint that names this mistake in the first block
import numpy as np


def _validated(P, R, policy=None):
    P = np.asarray(P, dtype=float)
    R = np.asarray(R, dtype=float)
    tol = np.finfo(float).eps  # the mistake: a tolerance of one rounding of float64, not of the input's precision
    if P.ndim != 3 or P.shape[0] != P.shape[2]:
        raise ValueError(f"P должна иметь форму [S, A, S], а имеет {P.shape}")
    if R.shape != P.shape[:2]:
        raise ValueError(f"R должна иметь форму [S, A] = {P.shape[:2]}, а имеет {R.shape}")
    if np.any(P < 0) or np.any(np.abs(P.sum(axis=2) - 1) > tol):
        raise ValueError("каждая строка P[s, a, :] должна быть распределением: вероятности ≥ 0, сумма 1")
    if policy is None:
        return P, R, None
    policy = np.asarray(policy, dtype=float)
    if policy.shape != R.shape:
        raise ValueError(f"policy должна иметь форму [S, A] = {R.shape}, а имеет {policy.shape}")
    if np.any(policy < 0) or np.any(np.abs(policy.sum(axis=1) - 1) > tol):
        raise ValueError("каждая строка policy[s, :] должна быть распределением: вероятности ≥ 0, сумма 1")
    return P, R, policy
