"""SARSA bootstraps with one ε-greedy draw a' but then acts with a fresh draw: the target's a' is not the action
taken."""
BREAKS = "sarsa"
NAMED_BY = ["a' в цели — отдельный ε-жадный выбор"]
import numpy as np


def sarsa(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    episode_returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        total, done = 0.0, False
        while not done:
            a = epsilon_greedy(Q[s], epsilon, rng)  # the mistake: a new draw instead of the a' used below
            s_next, r, terminated, truncated, _ = env.step(a)
            total += r
            done = terminated or truncated
            if terminated:
                target = r
            else:
                a_next = epsilon_greedy(Q[s_next], epsilon, rng)
                target = r + gamma * Q[s_next, a_next]
            Q[s, a] += alpha * (target - Q[s, a])
            s = s_next
        episode_returns[episode] = total
    return Q, episode_returns


