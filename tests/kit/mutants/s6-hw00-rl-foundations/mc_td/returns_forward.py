"""Returns accumulated forward from the start of the episode: G_t = r_t + γ·G_{t−1}."""
BREAKS = "discounted_returns"
NAMED_BY = ["отдача накоплена с начала эпизода", "отдачи накоплены с начала эпизода"]
import numpy as np


def discounted_returns(rewards, gamma):
    rewards = np.asarray(rewards, dtype=float)
    G = np.zeros(len(rewards))
    running = 0.0
    for t in range(len(rewards)):
        running = rewards[t] + gamma * running
        G[t] = running
    return G
