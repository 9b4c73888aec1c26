"""ε-greedy finds the greedy actions with np.isclose(q, q.max()) instead of exact equality: an action worse by 10⁻⁶
(a near tie, not a tie) counts as a maximum, and the greedy choice goes to it half the time. Breaks epsilon_greedy;
rejected by «ε-жадный выбор при ε = 0 — жадное действие …», which now also asks for the best of two Q 10⁻⁶ apart."""
BREAKS = "epsilon_greedy"
NAMED_BY = ["ничья — только у точно равных Q"]  # the hint that names this mistake in the first block
import numpy as np


def epsilon_greedy(q_values, epsilon, rng):
    q = np.asarray(q_values, dtype=float)
    if rng.random() < epsilon:
        return int(rng.integers(len(q)))
    best = np.flatnonzero(np.isclose(q, q.max()))  # the mistake: a tolerance where the docstring asks for the max
    return int(rng.choice(best))
