"""TD(0) works on V0 itself, V = np.asarray(V0) without dtype: a float64 V0 is updated in place (np.asarray makes no
copy), and V0 given as integers makes V an integer array whose every update V(s) += α·δ is truncated. Breaks
td0_prediction; the first block is «TD(0): оборванный эпизод …» on V0 = [1, 2, 2] as ints, which names the integer
array (its hint, np.array(V0, dtype=float), fixes both); «TD(0) на одном эпизоде …» says the caller's V0 changed."""
BREAKS = "td0_prediction"
NAMED_BY = ["V — целый массив"]
import numpy as np


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    V = np.zeros(n_states) if V0 is None else np.asarray(V0)
    for _ in range(n_epochs):
        for episode in episodes:
            for s, r, s_next, terminated in episode:
                target = r if terminated else r + gamma * V[s_next]
                V[s] += alpha * (target - V[s])
    return V


