"""The TD target bootstraps from the current state's value: r + γ·V(s) instead of r + γ·V(s')."""
BREAKS = "td0_prediction"
NAMED_BY = ["в цели TD стоит V текущего состояния s"]
import numpy as np


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    V = np.zeros(n_states) if V0 is None else np.array(V0, dtype=float)
    for _ in range(n_epochs):
        for episode in episodes:
            for s, r, s_next, terminated in episode:
                target = r if terminated else r + gamma * V[s]
                V[s] += alpha * (target - V[s])
    return V
