"""GAE over a batch is not cut at the end of an episode: the recursion runs through it."""
BREAKS = "gae_with_boundaries"
NAMED_BY = ["рекурсия не обрывается на конце эпизода", "рекурсия не обрывается на концах эпизодов"]
import numpy as np


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    r, v, vn = (np.asarray(x, dtype=float) for x in (rewards, values, next_values))
    term = np.asarray(terminated, dtype=bool)
    delta = r + gamma * vn * (~term) - v
    adv = np.zeros_like(delta)
    running = np.zeros_like(delta[0])
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running
        adv[t] = running
    return adv, adv + v


