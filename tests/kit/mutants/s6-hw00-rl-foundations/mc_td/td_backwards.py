"""TD(0) walks each episode's transitions from the end (as in the Monte Carlo pass), not in the order they happened."""
BREAKS = "td0_prediction"
NAMED_BY = ["переходы эпизода обработаны с конца"]
import numpy as np


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    V = np.zeros(n_states) if V0 is None else np.array(V0, dtype=float)
    for _ in range(n_epochs):
        for episode in episodes:
            for s, r, s_next, terminated in reversed(episode):  # the mistake
                target = r if terminated else r + gamma * V[s_next]
                V[s] += alpha * (target - V[s])
    return V


