"""A truncated step is treated as terminal: V(s_{t+1}) of the real next observation is dropped."""
BREAKS = "gae_with_boundaries"
NAMED_BY = ["оборванный эпизод не бутстрапит V(s_{t+1})", "оборванный эпизод (truncated) не бутстрапит V(s_{t+1})"]
import numpy as np


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    r, v, vn = (np.asarray(x, dtype=float) for x in (rewards, values, next_values))
    done = np.asarray(terminated, dtype=bool) | np.asarray(truncated, dtype=bool)
    delta = r + gamma * vn * (~done) - v
    adv = np.zeros_like(delta)
    running = np.zeros_like(delta[0])
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running * (~done[t])
        adv[t] = running
    return adv, adv + v


