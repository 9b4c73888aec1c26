"""discounted_returns allocates G with np.zeros_like(rewards) and converts rewards without dtype=float: integer
rewards (a list of Python ints, an np.int64 array) give an integer G, and every discounted return is truncated.
Breaks discounted_returns; rejected by «Отдачи робота-курьера …», which now also passes the lesson's r = [1, 0, 2]
as ints."""
BREAKS = "discounted_returns"
NAMED_BY = ["G — целый массив"]
import numpy as np


def discounted_returns(rewards, gamma):
    rewards = np.asarray(rewards)
    G = np.zeros_like(rewards)  # the mistake: the dtype of the rewards, int for integer rewards
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running
        G[t] = running
    return G
