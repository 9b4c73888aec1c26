"""The TD step goes the wrong way: V(s) −= α·δ (δ written as V(s) − target)."""
BREAKS = "td0_prediction"
NAMED_BY = ["шаг в обратную сторону"]
import numpy as np


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    V = np.zeros(n_states) if V0 is None else np.array(V0, dtype=float)
    for _ in range(n_epochs):
        for episode in episodes:
            for s, r, s_next, terminated in episode:
                target = r if terminated else r + gamma * V[s_next]
                V[s] += alpha * (V[s] - target)  # the mistake: the sign of δ
    return V


