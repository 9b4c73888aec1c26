"""Q-learning's target forgets the discount: r + max_b Q(s', b) instead of r + γ·max_b Q(s', b)."""
BREAKS = "q_learning"
NAMED_BY = ["γ не используется в цели"]
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
            target = r + (0.0 if terminated else Q[s_next].max())  # the mistake: no γ
            Q[s, a] += alpha * (target - Q[s, a])
            total += r
            s, done = s_next, terminated or truncated
        episode_returns[episode] = total
    return Q, episode_returns


