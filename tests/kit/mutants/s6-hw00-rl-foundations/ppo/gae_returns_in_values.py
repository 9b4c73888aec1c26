"""gae computes the returns in the values array (values += advantages): np.asarray makes no copy of a float64 array,
so the caller's V(s_t) become the targets R̂_t. Breaks gae; rejected by «GAE принимает списки, float32 и целые награды,
не меняет входы …», which now also passes float64 arrays and checks that they are left unchanged."""
BREAKS = "gae"
NAMED_BY = ["изменила аргумент `values` на месте"]  # the hint that names this mistake in the first block
import numpy as np


def gae(rewards, values, last_value, gamma, lam):
    delta = td_errors(rewards, values, last_value, gamma)
    advantages = np.zeros_like(delta)
    running = 0.0
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running
        advantages[t] = running
    returns = np.asarray(values, dtype=float)  # the mistake: for float64 this is the caller's array
    returns += advantages
    return advantages, returns
