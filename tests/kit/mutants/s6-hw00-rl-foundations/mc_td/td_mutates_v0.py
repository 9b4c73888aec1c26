"""TD(0) updates the caller's V0 in place (np.asarray makes no copy)."""
import numpy as np


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    V = np.zeros(n_states) if V0 is None else np.asarray(V0)
    for _ in range(n_epochs):
        for episode in episodes:
            for s, r, s_next, terminated in episode:
                target = r if terminated else r + gamma * V[s_next]
                V[s] += alpha * (target - V[s])
    return V


