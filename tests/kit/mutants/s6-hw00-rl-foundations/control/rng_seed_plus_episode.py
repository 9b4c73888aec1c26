"""Q-learning creates a new generator in every episode, rng = default_rng(seed + episode): the episodes differ, but
the run for seed + 1 repeats the run for seed shifted by one episode, and the docstring's one generator for the
whole run is gone. Breaks q_learning; rejected by «q_learning детерминирован …», which now compares the actions of
seed 30 and seed 31 at ε = 1."""
BREAKS = "q_learning"
NAMED_BY = ["default_rng(seed + номер эпизода)"]
import numpy as np


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    episode_returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        rng = np.random.default_rng(seed + episode)  # the mistake: one generator per episode
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
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
