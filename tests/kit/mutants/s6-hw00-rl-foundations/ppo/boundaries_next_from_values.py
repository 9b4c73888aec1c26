"""gae_with_boundaries takes V(s_{t+1}) from values[t + 1] (next_values only after the last step): after a
truncated step that is the value of the next episode's first observation."""
BREAKS = "gae_with_boundaries"
NAMED_BY = ["V(s_{t+1}) взята из values[t + 1]"]
import numpy as np


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    r, v, vn = (np.asarray(x, dtype=float) for x in (rewards, values, next_values))
    term = np.asarray(terminated, dtype=bool)
    done = term | np.asarray(truncated, dtype=bool)
    v_next = np.concatenate([v[1:], vn[-1:]])  # the mistake
    delta = r + gamma * v_next * (~term) - v
    adv = np.zeros_like(delta)
    running = np.zeros_like(delta[0])
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running * (~done[t])
        adv[t] = running
    return adv, adv + v


