"""gae_with_boundaries lets truncated override terminated: a step flagged both (the time limit reached on the last
step of the task) bootstraps V(s_{t+1}), as if the episode had only been cut."""
BREAKS = "gae_with_boundaries"
NAMED_BY = ["на шаге с обоими флагами (terminated и truncated) δ бутстрапит V(s_{t+1})"]
import numpy as np


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    r, v, vn = (np.asarray(x, dtype=float) for x in (rewards, values, next_values))
    trunc = np.asarray(truncated, dtype=bool)
    term = np.asarray(terminated, dtype=bool) & ~trunc  # the mistake: a cut step is "not terminal", whatever else
    done = term | trunc
    delta = r + gamma * vn * (~term) - v
    adv = np.zeros_like(delta)
    running = np.zeros_like(delta[0])
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running * (~done[t])
        adv[t] = running
    return adv, adv + v
