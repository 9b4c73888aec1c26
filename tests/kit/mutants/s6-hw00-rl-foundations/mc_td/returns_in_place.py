"""discounted_returns accumulates the returns in the rewards array itself (np.asarray makes no copy of a float64
array): the caller's rewards are overwritten with G. Breaks discounted_returns; rejected by «Отдачи случайных
эпизодов против явной суммы …», which now also passes a float64 array and checks it is left unchanged."""
BREAKS = "discounted_returns"
NAMED_BY = ["изменила аргумент `rewards` на месте"]  # the hint that names this mistake in the first block
import numpy as np


def discounted_returns(rewards, gamma):
    G = np.asarray(rewards, dtype=float)  # the mistake: for a float64 array this is the caller's array
    for t in reversed(range(len(G) - 1)):
        G[t] += gamma * G[t + 1]
    return G
