"""The generator is created anew at the start of every episode (rng = default_rng(seed) inside the episode loop):
every episode repeats the same random draws."""
BREAKS = "q_learning"
NAMED_BY = ["default_rng(seed) внутри цикла по эпизодам"]
import numpy as np


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    episode_returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        rng = np.random.default_rng(seed)  # the mistake: one generator per episode, always the same
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        total, done = 0.0, False
        while not done:
            a = epsilon_greedy(Q[s], epsilon, rng)
            s_next, r, terminated, truncated, _ = env.step(a)
            Q[s, a] += alpha * (r + (0.0 if terminated else gamma * Q[s_next].max()) - Q[s, a])
            total += r
            s, done = s_next, terminated or truncated
        episode_returns[episode] = total
    return Q, episode_returns


