"""The last transition of every episode is treated as terminal, even when the episode was truncated."""
BREAKS = "td0_prediction"
NAMED_BY = ["оборванный эпизод считается законченным"]
import numpy as np


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    V = np.zeros(n_states) if V0 is None else np.array(V0, dtype=float)
    for _ in range(n_epochs):
        for episode in episodes:
            for t, (s, r, s_next, terminated) in enumerate(episode):
                last = t == len(episode) - 1
                target = r if last else r + gamma * V[s_next]
                V[s] += alpha * (target - V[s])
    return V


