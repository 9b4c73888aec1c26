"""Value iteration's tie tolerance is 1e-8·max(1, max Q), without abs: for a negative max Q (a state whose every
action costs, max Q = −1000) the tolerance shrinks to 1e-8, and an action within 0.999·10⁻⁵ of the best, a tie by the
rule, wins over a lower index. Breaks value_iteration; rejected by «Правило равенства …»."""
BREAKS = "value_iteration"
NAMED_BY = ["допуск 1e-8·max(1, max Q) без модуля"]
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
    is_best = Q >= best - 1e-8 * np.maximum(1.0, best)  # the mistake: max(1, max Q), not max(1, |max Q|)
    return V_new, np.eye(Q.shape[1])[np.argmax(is_best, axis=1)]
