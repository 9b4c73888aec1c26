"""The episode loop stops at `terminated` before the update: the last transition into a terminal state never
updates V(s), though its target is just r."""
BREAKS = "td0_prediction"
NAMED_BY = ["на переходе с terminated = True V(s) не обновляется"]
import numpy as np


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    V = np.zeros(n_states) if V0 is None else np.array(V0, dtype=float)
    for _ in range(n_epochs):
        for episode in episodes:
            for s, r, s_next, terminated in episode:
                if terminated:
                    break  # the mistake: "the terminal state has no value", so no update at all
                V[s] += alpha * (r + gamma * V[s_next] - V[s])
    return V


