"""q_from_v discounts the immediate reward too: Q = γ·(R + P·V) instead of R + γ·P·V."""
BREAKS = "q_from_v"
NAMED_BY = ["γ умножает и награду: γ·(R + P·V)"]
import numpy as np


def q_from_v(P, R, V, gamma):
    P, R, _ = _validated(P, R)
    V = np.asarray(V, dtype=float)
    return gamma * (R + P @ V)


