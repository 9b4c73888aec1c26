"""Sample averages as sums / counts over all states: a state never visited gets 0/0 = NaN instead of V = 0."""
BREAKS = "mc_prediction"
NAMED_BY = ["нет ни одного посещения: N(s) = 0"]
import numpy as np

_reference_mc_prediction = mc_prediction  # noqa: F821 - the reference, defined above in the module


def mc_prediction(episodes, n_states, gamma, first_visit=True, alpha=None):
    if alpha is not None:
        return _reference_mc_prediction(episodes, n_states, gamma, first_visit=first_visit, alpha=alpha)
    sums, counts = np.zeros(n_states), np.zeros(n_states)
    for episode in episodes:
        states = [int(s) for s, _, _, _ in episode]
        G = discounted_returns([r for _, r, _, _ in episode], gamma)
        for t, s in enumerate(states):
            if first_visit and states.index(s) != t:
                continue
            sums[s] += G[t]
            counts[s] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts  # the mistake: 0/0 for unvisited states

