"""ε-greedy draws from NumPy's global generator instead of the rng it is given: runs are not reproducible."""
BREAKS = "epsilon_greedy"
NAMED_BY = ["берите случайность только из аргумента rng"]  # the hint that names this mistake in the first block
import numpy as np


def epsilon_greedy(q_values, epsilon, rng):
    q = np.asarray(q_values, dtype=float)
    if np.random.random() < epsilon:
        return int(np.random.randint(len(q)))
    return int(np.random.choice(np.flatnonzero(q == q.max())))


