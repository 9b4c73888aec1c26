"""Validation compares the row sums of P and policy with 1 exactly (== 1): rows that sum to 1 only up to rounding
(float32 probabilities such as [0.6, 0.3, 0.1], whose sum in float64 is 1 + 3.7·10⁻⁸) are wrongly rejected with
ValueError. Breaks all five functions of dp (they all validate); rejected by «Плохой вход: строки P или policy — не
распределения …», which now also passes such rows and expects no ValueError."""
BREAKS = ("solve_bellman", "policy_evaluation", "q_from_v", "value_iteration", "policy_iteration")
NAMED_BY = ["сравнивайте суммы строк с 1 с допуском"]  # the hint that names this mistake in the first block
import numpy as np


def _validated(P, R, policy=None):
    P = np.asarray(P, dtype=float)
    R = np.asarray(R, dtype=float)
    if P.ndim != 3 or P.shape[0] != P.shape[2]:
        raise ValueError(f"P должна иметь форму [S, A, S], а имеет {P.shape}")
    if R.shape != P.shape[:2]:
        raise ValueError(f"R должна иметь форму [S, A] = {P.shape[:2]}, а имеет {R.shape}")
    if np.any(P < 0) or not np.all(P.sum(axis=2) == 1.0):  # the mistake: exact equality
        raise ValueError("каждая строка P[s, a, :] должна быть распределением: вероятности ≥ 0, сумма 1")
    if policy is None:
        return P, R, None
    policy = np.asarray(policy, dtype=float)
    if policy.shape != R.shape:
        raise ValueError(f"policy должна иметь форму [S, A] = {R.shape}, а имеет {policy.shape}")
    if np.any(policy < 0) or not np.all(policy.sum(axis=1) == 1.0):  # the mistake: exact equality
        raise ValueError("каждая строка policy[s, :] должна быть распределением: вероятности ≥ 0, сумма 1")
    return P, R, policy
