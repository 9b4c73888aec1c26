"""terminated and truncated swapped: the truncated step drops V(s_{t+1}), the terminal one bootstraps it."""
BREAKS = "gae_with_boundaries"
NAMED_BY = ["terminated и truncated перепутаны"]
import numpy as np


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    r, v, vn = (np.asarray(x, dtype=float) for x in (rewards, values, next_values))
    trunc = np.asarray(truncated, dtype=bool)
    done = trunc | np.asarray(terminated, dtype=bool)
    delta = r + gamma * vn * (~trunc) - v
    adv = np.zeros_like(delta)
    running = np.zeros_like(delta[0])
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running * (~done[t])
        adv[t] = running
    return adv, adv + v


