"""Value iteration's greedy policy treats as equal the actions that np.isclose calls close to the best (rtol = 1e-5,
atol = 1e-8): far wider than the tie rule's 1e-8·max(1, |max Q|), so an action better by 1.001·10⁻⁸ (not a tie) loses
to a lower index. Breaks value_iteration; rejected by «Правило равенства …»."""
BREAKS = "value_iteration"
NAMED_BY = ["равенство по np.isclose с max Q"]
import numpy as np


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    while True:
        V_new = q_from_v(P, R, V, gamma).max(axis=1)
        if np.max(np.abs(V_new - V)) < tol:
            break
        V = V_new
    Q = q_from_v(P, R, V_new, gamma)
    is_best = np.isclose(Q, Q.max(axis=1, keepdims=True))  # the mistake: np.isclose's tolerance, not the rule's
    return V_new, np.eye(Q.shape[1])[np.argmax(is_best, axis=1)]
