"""Exploration picks only among the non-greedy actions, so P(greedy) = 1 − ε instead of 1 − ε + ε/A."""
BREAKS = "epsilon_greedy"
NAMED_BY = ["случайное действие выбирается только среди НЕжадных"]
import numpy as np


def epsilon_greedy(q_values, epsilon, rng):
    q = np.asarray(q_values, dtype=float)
    best = np.flatnonzero(q == q.max())
    greedy = int(rng.choice(best))
    if rng.random() < epsilon:
        others = [a for a in range(len(q)) if a != greedy]
        return int(rng.choice(others))
    return greedy


