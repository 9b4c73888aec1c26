"""q_from_v sums P over the current state s instead of the next state s'."""
BREAKS = "q_from_v"
NAMED_BY = ["сумма по оси s, а не s'"]
import numpy as np


def q_from_v(P, R, V, gamma):
    P, R, _ = _validated(P, R)
    V = np.asarray(V, dtype=float)
    return R + gamma * np.einsum("sat,s->sa", P, V)


