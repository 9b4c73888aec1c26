"""Value iteration stops on a relative change, max|V_new − V| < tol·max|V_new|: where V* ≡ 0 (all rewards zero)
the change is 0 and 0 < 0 never holds, so the loop never ends."""
BREAKS = "value_iteration"
NAMED_BY = []
import numpy as np


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    while True:
        V_new = q_from_v(P, R, V, gamma).max(axis=1)
        if np.max(np.abs(V_new - V)) < tol * np.max(np.abs(V_new)):  # the mistake: a relative tolerance
            break
        V = V_new
    return V_new, _greedy(q_from_v(P, R, V_new, gamma))
