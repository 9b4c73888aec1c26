"""Constant-α Monte Carlo tests `if alpha:`, so alpha = 0 is taken for "no alpha" and gives the sample averages
instead of a step of 0 (V stays 0)."""
BREAKS = "mc_prediction"
NAMED_BY = []
import numpy as np


def mc_prediction(episodes, n_states, gamma, first_visit=True, alpha=None):
    V = np.zeros(n_states)
    counts = np.zeros(n_states)
    for episode in episodes:
        states = [int(s) for s, _, _, _ in episode]
        G = discounted_returns([r for _, r, _, _ in episode], gamma)
        seen = set()
        for t, s in enumerate(states):
            if first_visit and s in seen:
                continue
            seen.add(s)
            if alpha:  # the mistake: alpha = 0 counts as "not given"
                V[s] += alpha * (G[t] - V[s])
            else:
                counts[s] += 1
                V[s] += (G[t] - V[s]) / counts[s]
    return V
