"""The discount counts steps from the start of the episode: G_t = Σ_{k ≥ t} γ^k·r_k instead of γ^(k − t)."""
BREAKS = "discounted_returns"
NAMED_BY = ["γ в степени номера шага от начала эпизода"]
import numpy as np


def discounted_returns(rewards, gamma):
    r = np.asarray(rewards, dtype=float)
    weights = gamma ** np.arange(len(r))
    return np.array([np.sum(weights[t:] * r[t:]) for t in range(len(r))])


