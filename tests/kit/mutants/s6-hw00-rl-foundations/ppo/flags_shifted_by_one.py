"""gae_with_boundaries reads the end-of-episode flags one step late (terminated[t + 1], as CleanRL reads its
`dones`, which mark the first step of the next episode): here the flags mark the step on which the episode ended,
so the cut and the terminal δ land on the wrong step."""
BREAKS = "gae_with_boundaries"
NAMED_BY = ["флаги взяты со следующего шага"]
import numpy as np


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    r, v, v_next = (np.asarray(x, dtype=float) for x in (rewards, values, next_values))
    term, trunc = np.asarray(terminated, dtype=bool), np.asarray(truncated, dtype=bool)
    advantages = np.zeros_like(r)
    running = np.zeros_like(r[0])
    for t in reversed(range(len(r))):
        if t + 1 < len(r):
            not_term, not_done = ~term[t + 1], ~(term[t + 1] | trunc[t + 1])
        else:
            not_term = not_done = np.ones_like(term[t])
        delta = r[t] + gamma * v_next[t] * not_term - v[t]
        running = delta + gamma * lam * not_done * running
        advantages[t] = running
    return advantages, advantages + v


