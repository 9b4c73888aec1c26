"""ε-greedy with ε and 1 − ε swapped: the random action is taken with probability 1 − ε (rng.random() > ε)."""
BREAKS = "epsilon_greedy"
NAMED_BY = ["ε и 1 − ε перепутаны", "ε — вероятность жадного действия, а не случайного"]
import numpy as np


def epsilon_greedy(q_values, epsilon, rng):
    q = np.asarray(q_values, dtype=float)
    if rng.random() > epsilon:  # the mistake: the comparison is the wrong way round
        return int(rng.integers(len(q)))
    return int(rng.choice(np.flatnonzero(q == q.max())))


