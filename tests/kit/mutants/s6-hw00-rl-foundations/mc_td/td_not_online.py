"""TD(0) computes every δ of an episode from the values before the episode (not online, in order)."""
BREAKS = "td0_prediction"
NAMED_BY = ["все δ эпизода посчитаны по старым V"]
import numpy as np


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    V = np.zeros(n_states) if V0 is None else np.array(V0, dtype=float)
    for _ in range(n_epochs):
        for episode in episodes:
            old = V.copy()
            for s, r, s_next, terminated in episode:
                target = r if terminated else r + gamma * old[s_next]
                V[s] += alpha * (target - old[s])
    return V


