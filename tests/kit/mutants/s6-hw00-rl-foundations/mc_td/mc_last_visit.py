"""First-visit Monte Carlo that counts the LAST visit of a state in an episode: the dictionary of visits is
overwritten at every visit (first[s] = t instead of first.setdefault(s, t))."""
BREAKS = "mc_prediction"
NAMED_BY = ["учтено последнее посещение состояния в эпизоде"]
import numpy as np


def mc_prediction(episodes, n_states, gamma, first_visit=True, alpha=None):
    V = np.zeros(n_states)
    counts = np.zeros(n_states)
    for episode in episodes:
        states = [int(s) for s, _, _, _ in episode]
        G = discounted_returns([r for _, r, _, _ in episode], gamma)
        visit = {}
        for t, s in enumerate(states):
            visit[s] = t  # the mistake: the last visit wins
        for t, s in enumerate(states):
            if first_visit and visit[s] != t:
                continue
            if alpha is None:
                counts[s] += 1
                V[s] += (G[t] - V[s]) / counts[s]
            else:
                V[s] += alpha * (G[t] - V[s])
    return V


