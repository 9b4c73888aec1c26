"""episode_returns hold the discounted return Σ γ^t r_t instead of the plain sum of the episode's rewards."""
BREAKS = "q_learning"
NAMED_BY = ["в episode_returns отдача с дисконтом"]
import numpy as np


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    episode_returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        total, discount, done = 0.0, 1.0, False
        while not done:
            a = epsilon_greedy(Q[s], epsilon, rng)
            s_next, r, terminated, truncated, _ = env.step(a)
            target = r + (0.0 if terminated else gamma * Q[s_next].max())
            Q[s, a] += alpha * (target - Q[s, a])
            total += discount * r  # the mistake: discounted
            discount *= gamma
            s, done = s_next, terminated or truncated
        episode_returns[episode] = total
    return Q, episode_returns


