"""gae_with_boundaries returns the advantages as the critic's targets: values are not added back (the same mistake as
returns_without_values in gae)."""
BREAKS = "gae_with_boundaries"
NAMED_BY = ["вернули advantages вместо returns"]
import numpy as np


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    r = np.asarray(rewards, dtype=float)
    v = np.asarray(values, dtype=float)
    v_next = np.asarray(next_values, dtype=float)
    term = np.asarray(terminated, dtype=bool)
    done = term | np.asarray(truncated, dtype=bool)
    delta = r + gamma * v_next * (~term) - v
    advantages = np.zeros_like(delta)
    running = np.zeros_like(delta[0])
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running * (~done[t])
        advantages[t] = running
    return advantages, advantages.copy()  # the mistake: returns without + values
