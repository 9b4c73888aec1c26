"""q_from_v fills Q element by element in np.zeros_like(R), with R converted without dtype=float: integer rewards
(a list of ints, an np.int64 array, as a grid world's −1 per step) make Q an integer array, and every
Q(s, a) = R + γ·P·V is truncated. Breaks q_from_v; rejected by «Случайные MDP: q_from_v совпадает с суммой …»,
which now also passes R as np.int64."""
BREAKS = "q_from_v"
NAMED_BY = ["Q — целый массив"]
import numpy as np


def q_from_v(P, R, V, gamma):
    _validated(P, R)
    P, R, V = np.asarray(P, dtype=float), np.asarray(R), np.asarray(V, dtype=float)  # the mistake: R keeps its dtype
    if V.shape != (P.shape[0],):
        raise ValueError(f"V должна иметь форму [S] = ({P.shape[0]},), а имеет {V.shape}")
    Q = np.zeros_like(R)
    for s in range(R.shape[0]):
        for a in range(R.shape[1]):
            Q[s, a] = R[s, a] + gamma * P[s, a] @ V
    return Q
