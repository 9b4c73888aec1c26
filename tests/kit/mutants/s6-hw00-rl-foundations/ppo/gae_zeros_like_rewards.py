"""gae allocates the advantages with np.zeros_like(rewards), rewards converted without dtype=float: integer rewards
(the courier's r = [1, 0, 2] as ints) make an integer array, and every Â_t is truncated. Breaks gae; rejected by
«GAE принимает списки, float32 и целые награды …», which now also passes the courier's rewards as ints."""
BREAKS = "gae"
NAMED_BY = ["advantages — целый массив"]
import numpy as np


def gae(rewards, values, last_value, gamma, lam):
    rewards = np.asarray(rewards)
    delta = td_errors(rewards, values, last_value, gamma)
    advantages = np.zeros_like(rewards)  # the mistake: the rewards' dtype, int for integer rewards
    running = 0.0
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running
        advantages[t] = running
    return advantages, advantages + np.asarray(values, dtype=float)
