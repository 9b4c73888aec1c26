"""gae returns the advantages as the critic's targets: values are not added back."""
BREAKS = "gae"
NAMED_BY = ["вернули advantages вместо returns"]
import numpy as np


def gae(rewards, values, last_value, gamma, lam):
    delta = td_errors(rewards, values, last_value, gamma)
    adv = np.zeros_like(delta)
    running = 0.0
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running
        adv[t] = running
    return adv, adv.copy()


