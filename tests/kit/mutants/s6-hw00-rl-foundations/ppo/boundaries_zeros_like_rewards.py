"""gae_with_boundaries allocates the advantages with np.zeros_like of the rewards, converted without dtype=float:
integer rewards make an integer array, and every Â_t is truncated. Breaks gae_with_boundaries; rejected by «Границы
эпизодов: terminated не бутстрапит …», which now also passes the rewards [1, 0, 1, 2] as ints."""
BREAKS = "gae_with_boundaries"
NAMED_BY = ["advantages — целый массив"]
import numpy as np


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    r = np.asarray(rewards)  # the mistake: no dtype=float
    v = np.asarray(values, dtype=float)
    v_next = np.asarray(next_values, dtype=float)
    term = np.asarray(terminated, dtype=bool)
    done = term | np.asarray(truncated, dtype=bool)
    delta = r + gamma * v_next * (~term) - v
    advantages = np.zeros_like(r)
    running = np.zeros(r.shape[1:])
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running * (~done[t])
        advantages[t] = running
    return advantages, advantages + v
