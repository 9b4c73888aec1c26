"""Every-visit Monte Carlo where first-visit is asked: the first_visit flag is ignored."""
BREAKS = "mc_prediction"
NAMED_BY = ["every-visit вместо first-visit"]
import numpy as np


def mc_prediction(episodes, n_states, gamma, first_visit=True, alpha=None):
    V = np.zeros(n_states)
    counts = np.zeros(n_states)
    for episode in episodes:
        G = discounted_returns([r for _, r, _, _ in episode], gamma)
        for t, (s, _, _, _) in enumerate(episode):
            if alpha is None:
                counts[s] += 1
                V[s] += (G[t] - V[s]) / counts[s]
            else:
                V[s] += alpha * (G[t] - V[s])
    return V


