"""Ties in argmax always go to the first action (np.argmax): at the start, with Q = 0, the agent only goes up."""
BREAKS = "epsilon_greedy"
NAMED_BY = ["np.argmax всегда берёт первое из равных", "ничья разбита первым по номеру действием"]
import numpy as np


def epsilon_greedy(q_values, epsilon, rng):
    if rng.random() < epsilon:
        return int(rng.integers(len(q_values)))
    return int(np.argmax(q_values))


