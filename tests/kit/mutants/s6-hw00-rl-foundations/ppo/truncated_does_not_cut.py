"""gae_with_boundaries bootstraps a truncated step correctly in δ, but cuts the recursion only at terminated:
the advantage of a truncated episode's last steps leaks into the next episode's."""
BREAKS = "gae_with_boundaries"
NAMED_BY = ["рекурсия обрывается только на terminated"]
import numpy as np


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    r, v, v_next = (np.asarray(x, dtype=float) for x in (rewards, values, next_values))
    term = np.asarray(terminated, dtype=bool)
    delta = r + gamma * v_next * (1 - term) - v
    advantages = np.zeros_like(delta)
    running = np.zeros_like(delta[0])
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running * (1 - term[t])
        advantages[t] = running
    return advantages, advantages + v


