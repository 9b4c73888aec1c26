"""Q-learning never passes its seed to the environment (env.reset() in every episode): on an environment with random
dynamics the run is not determined by seed. Breaks q_learning; rejected by «q_learning детерминирован …», which now
compares the episodes of a random walk with the environment's own episodes for that seed."""
BREAKS = "q_learning"
NAMED_BY = ["seed не передан среде"]
import numpy as np


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    episode_returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset()  # the mistake: the first episode is not reset with seed=seed
        total, done = 0.0, False
        while not done:
            a = epsilon_greedy(Q[s], epsilon, rng)
            s_next, r, terminated, truncated, _ = env.step(a)
            target = r + (0.0 if terminated else gamma * Q[s_next].max())
            Q[s, a] += alpha * (target - Q[s, a])
            total += r
            s, done = s_next, terminated or truncated
        episode_returns[episode] = total
    return Q, episode_returns
