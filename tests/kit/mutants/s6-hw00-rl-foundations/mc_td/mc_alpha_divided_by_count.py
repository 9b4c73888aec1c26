"""Constant-α Monte Carlo that also divides by the visit count: V += α·(G − V)/N."""
BREAKS = "mc_prediction"
NAMED_BY = ["шаг α поделён на число посещений N(s)"]
import numpy as np


def mc_prediction(episodes, n_states, gamma, first_visit=True, alpha=None):
    V = np.zeros(n_states)
    counts = np.zeros(n_states)
    for episode in episodes:
        G = discounted_returns([r for _, r, _, _ in episode], gamma)
        states = [s for s, _, _, _ in episode]
        for t, s in enumerate(states):
            if first_visit and states.index(s) != t:
                continue
            counts[s] += 1
            step = 1.0 / counts[s] if alpha is None else alpha / counts[s]
            V[s] += step * (G[t] - V[s])
    return V


