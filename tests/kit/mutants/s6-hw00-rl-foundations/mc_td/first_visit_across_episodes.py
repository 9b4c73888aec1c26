"""First-visit Monte Carlo remembers visited states across episodes: only the first visit ever counts."""
BREAKS = "mc_prediction"
NAMED_BY = ["посещения запоминаются через все эпизоды"]
import numpy as np


def mc_prediction(episodes, n_states, gamma, first_visit=True, alpha=None):
    V = np.zeros(n_states)
    counts = np.zeros(n_states)
    seen = set()  # the mistake: not reset for each episode
    for episode in episodes:
        G = discounted_returns([r for _, r, _, _ in episode], gamma)
        for t, (s, _, _, _) in enumerate(episode):
            if first_visit and s in seen:
                continue
            seen.add(s)
            if alpha is None:
                counts[s] += 1
                V[s] += (G[t] - V[s]) / counts[s]
            else:
                V[s] += alpha * (G[t] - V[s])
    return V


