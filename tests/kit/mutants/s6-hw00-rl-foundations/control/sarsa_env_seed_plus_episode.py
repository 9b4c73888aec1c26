"""SARSA reseeds the environment in every episode with env.reset(seed=seed + episode): each episode's random dynamics
come from a generator of its own, and the run no longer follows the protocol of the docstring (reset(seed=seed)
first, then reset()). Breaks sarsa; rejected by «sarsa детерминирован …», which now compares the episodes of a random
walk with the environment's own episodes for that seed."""
BREAKS = "sarsa"
NAMED_BY = ["env.reset(seed=seed + эпизод)"]
import numpy as np


def sarsa(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    episode_returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed + episode)  # the mistake: a new seed for the environment in every episode
        a = epsilon_greedy(Q[s], epsilon, rng)
        total, done = 0.0, False
        while not done:
            s_next, r, terminated, truncated, _ = env.step(a)
            total += r
            done = terminated or truncated
            if terminated:
                target = r
            else:
                a_next = epsilon_greedy(Q[s_next], epsilon, rng)
                target = r + gamma * Q[s_next, a_next]
            Q[s, a] += alpha * (target - Q[s, a])
            if not done:
                s, a = s_next, a_next
        episode_returns[episode] = total
    return Q, episode_returns
