"""The GAE recursion runs from the start of the trajectory instead of from its end."""
BREAKS = "gae"
NAMED_BY = ["рекурсия идёт с начала траектории"]
import numpy as np


def gae(rewards, values, last_value, gamma, lam):
    delta = td_errors(rewards, values, last_value, gamma)
    adv = np.zeros_like(delta)
    running = 0.0
    for t in range(len(delta)):
        running = delta[t] + gamma * lam * running
        adv[t] = running
    return adv, adv + np.asarray(values, dtype=float)


