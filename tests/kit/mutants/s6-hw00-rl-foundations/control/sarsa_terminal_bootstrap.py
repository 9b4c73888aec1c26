"""SARSA bootstraps Q(s', a') even after `terminated`: the terminal observation gets a future."""
BREAKS = "sarsa"
NAMED_BY = ["после terminated всё равно бутстрапят"]
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
            a_next = epsilon_greedy(Q[s_next], epsilon, rng)
            Q[s, a] += alpha * (r + gamma * Q[s_next, a_next] - Q[s, a])  # the mistake: no (1 − terminated)
            s, a = s_next, a_next
        episode_returns[episode] = total
    return Q, episode_returns


