"""SARSA treats a truncated (time-limited) step like a terminal one: the target is r, the bootstrap is lost."""
BREAKS = "sarsa"
NAMED_BY = ["truncated принят за конец задачи"]
import numpy as np


def sarsa(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    episode_returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        a = epsilon_greedy(Q[s], epsilon, rng)
        total, done = 0.0, False
        while not done:
            s_next, r, terminated, truncated, _ = env.step(a)
            total += r
            done = terminated or truncated
            if done:
                target = r  # the mistake: truncated is not the end of the task
            else:
                a_next = epsilon_greedy(Q[s_next], epsilon, rng)
                target = r + gamma * Q[s_next, a_next]
            Q[s, a] += alpha * (target - Q[s, a])
            if not done:
                s, a = s_next, a_next
        episode_returns[episode] = total
    return Q, episode_returns


