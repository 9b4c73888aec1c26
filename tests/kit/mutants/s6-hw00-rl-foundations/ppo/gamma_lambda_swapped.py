"""The recursion multiplies by λ alone (γ forgotten, or γ and λ confused)."""
BREAKS = "gae"
NAMED_BY = ["в рекурсии только λ, без γ"]
import numpy as np


def gae(rewards, values, last_value, gamma, lam):
    delta = td_errors(rewards, values, last_value, gamma)
    adv = np.zeros_like(delta)
    running = 0.0
    for t in reversed(range(len(delta))):
        running = delta[t] + lam * running
        adv[t] = running
    return adv, adv + np.asarray(values, dtype=float)


