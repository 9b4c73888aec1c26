"""q_learning and sarsa only call env.reset() n_episodes times and never step: Q stays zero and every return is 0.
Its journal is empty, so a replay of it recomputes to Q = 0: the audit of the cliff run (grade only) rejects it by its
bookkeeping (each episode ends on terminated or truncated), the copy by the fork's episodes (one and two steps)."""
BREAKS = ("q_learning", "sarsa")
NAMED_BY = []
import numpy as np


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    for episode in range(n_episodes):
        env.reset(seed=seed) if episode == 0 else env.reset()
    return np.zeros((env.observation_space.n, env.action_space.n)), np.zeros(n_episodes)


def sarsa(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    return q_learning(env, n_episodes, alpha=alpha, gamma=gamma, epsilon=epsilon, seed=seed)
