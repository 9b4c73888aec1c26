"""n_epochs replays each episode n_epochs times in a row instead of passing over the whole batch n_epochs times."""
BREAKS = "td0_prediction"
NAMED_BY = ["каждый эпизод проигран n_epochs раз подряд"]
import numpy as np


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    V = np.zeros(n_states) if V0 is None else np.array(V0, dtype=float)
    for episode in episodes:
        for _ in range(n_epochs):  # the mistake: the epoch loop inside the episode loop
            for s, r, s_next, terminated in episode:
                target = r if terminated else r + gamma * V[s_next]
                V[s] += alpha * (target - V[s])
    return V


