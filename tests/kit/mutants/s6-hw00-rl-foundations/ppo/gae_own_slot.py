"""Off by one in the GAE recursion: Â_t = δ_t + γλ·Â_t (the slot being written, still 0) instead of Â_{t+1},
so the advantages come out as the bare TD errors."""
BREAKS = "gae"
NAMED_BY = ["вернули сами TD-ошибки δ без накопления"]
import numpy as np


def gae(rewards, values, last_value, gamma, lam):
    delta = td_errors(rewards, values, last_value, gamma)
    adv = np.zeros_like(delta)
    for t in reversed(range(len(delta))):
        adv[t] = delta[t] + gamma * lam * adv[t]  # the mistake: adv[t + 1]
    return adv, adv + np.asarray(values, dtype=float)


