"""td0_prediction copies V0 with np.array(V0) but without dtype=float: V0 given as integers ([1, 2, 2]) makes V an
integer array, and every update V(s) += α·δ is truncated. Breaks td0_prediction; rejected by «TD(0): оборванный
эпизод …», which now also passes V0 as a list of ints."""
BREAKS = "td0_prediction"
NAMED_BY = ["V — целый массив"]
import numpy as np


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    V = np.zeros(n_states) if V0 is None else np.array(V0)  # the mistake: a copy, but of V0's dtype
    for _ in range(n_epochs):
        for episode in episodes:
            for s, r, s_next, terminated in episode:
                target = r if terminated else r + gamma * V[s_next]
                V[s] += alpha * (target - V[s])
    return V
