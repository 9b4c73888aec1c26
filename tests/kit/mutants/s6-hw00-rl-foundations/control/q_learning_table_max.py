"""Q-learning's target takes the max over the whole table (Q.max()) instead of over the next state's actions."""
BREAKS = "q_learning"
NAMED_BY = ["max взят по всей таблице Q"]
import numpy as np


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    episode_returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        total, done = 0.0, False
        while not done:
            a = epsilon_greedy(Q[s], epsilon, rng)
            s_next, r, terminated, truncated, _ = env.step(a)
            target = r + (0.0 if terminated else gamma * Q.max())  # the mistake: Q.max(), not Q[s_next].max()
            Q[s, a] += alpha * (target - Q[s, a])
            total += r
            s, done = s_next, terminated or truncated
        episode_returns[episode] = total
    return Q, episode_returns


