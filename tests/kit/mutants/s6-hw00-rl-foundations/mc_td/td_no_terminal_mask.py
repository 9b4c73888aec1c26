"""TD(0) without the terminal mask: the target bootstraps V(s') even when s' is terminal."""
BREAKS = "td0_prediction"
NAMED_BY = ["у конечного перехода бутстрапится V(s')"]
import numpy as np


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    V = np.zeros(n_states) if V0 is None else np.array(V0, dtype=float)
    for _ in range(n_epochs):
        for episode in episodes:
            for s, r, s_next, terminated in episode:
                V[s] += alpha * (r + gamma * V[s_next] - V[s])
    return V
