"""Validation checks only the number of rows of R, policy and V (R.shape[0] == S, len(V) == S): a reward table
[S, 1], a policy [S, 1] or [1, A] and V [S, 1] are broadcast by NumPy and answered silently."""
BREAKS = ("solve_bellman", "policy_evaluation", "q_from_v", "value_iteration", "policy_iteration")
NAMED_BY = []
import numpy as np


def _validated(P, R, policy=None):
    P = np.asarray(P, dtype=float)
    R = np.asarray(R, dtype=float)
    if P.ndim != 3 or P.shape[0] != P.shape[2]:
        raise ValueError(f"P должна иметь форму [S, A, S], а имеет {P.shape}")
    if R.ndim != 2 or R.shape[0] != P.shape[0]:  # the mistake: the number of actions is never compared
        raise ValueError(f"R должна иметь {P.shape[0]} строк")
    if np.any(P < 0) or not np.allclose(P.sum(axis=2), 1.0, atol=1e-6):
        raise ValueError("каждая строка P[s, a, :] должна быть распределением")
    if policy is None:
        return P, R, None
    policy = np.asarray(policy, dtype=float)
    if policy.ndim != 2 or len(policy) not in (1, P.shape[0]):  # the mistake: [1, A] and [S, 1] pass
        raise ValueError(f"policy должна иметь {P.shape[0]} строк")
    if np.any(policy < 0) or not np.allclose(policy.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError("каждая строка policy[s, :] должна быть распределением")
    return P, R, policy


def q_from_v(P, R, V, gamma):
    P, R, _ = _validated(P, R)
    V = np.asarray(V, dtype=float)
    if len(V) != P.shape[0]:  # the mistake: V [S, 1] has S rows too
        raise ValueError(f"V должна иметь длину {P.shape[0]}")
    return R + gamma * P @ V
