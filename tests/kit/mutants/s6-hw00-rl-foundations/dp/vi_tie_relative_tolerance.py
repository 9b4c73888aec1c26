"""Value iteration's tie tolerance is relative only, 1e-8·|max Q| without the rule's max(1, ·): for |max Q| < 1 it is
narrower than the rule's 1e-8, so at max Q = 0.5 an action within 0.999·10⁻⁸ of the best (a tie by the rule) wins over
a lower index. Breaks value_iteration; rejected by «Правило равенства …»."""
BREAKS = "value_iteration"
NAMED_BY = ["допуск только относительный, 1e-8·|max Q| без max(1, ·)"]
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
    best = Q.max(axis=1, keepdims=True)
    is_best = Q >= best - 1e-8 * np.abs(best)  # the mistake: no max(1, ·)
    return V_new, np.eye(Q.shape[1])[np.argmax(is_best, axis=1)]
