"""gae_with_boundaries negates the flags with `~`: right for bool arrays, but on 0/1 integer flags ~0 = −1 and
~1 = −2, so "not done" becomes −1 and the recursion is scaled instead of cut."""
BREAKS = "gae_with_boundaries"
NAMED_BY = ["`~` на целых числах даёт −1 и −2"]
import numpy as np


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    r, v, v_next = (np.asarray(x, dtype=float) for x in (rewards, values, next_values))
    term, trunc = np.asarray(terminated), np.asarray(truncated)
    delta = r + gamma * v_next * ~term - v
    advantages = np.zeros_like(delta)
    running = np.zeros_like(delta[0])
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running * ~(term[t] | trunc[t])
        advantages[t] = running
    return advantages, advantages + v


