"""SARSA ends an episode only on `terminated`: a time-limited (truncated) episode runs on past its limit."""
BREAKS = "sarsa"
NAMED_BY = ["эпизод кончается только на terminated"]
import numpy as np


def sarsa(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        a = epsilon_greedy(Q[s], epsilon, rng)
        terminated = False
        steps = 0
        while not terminated and steps < 1000:
            s_next, r, terminated, truncated, _ = env.step(a)
            steps += 1
            returns[episode] += r
            a_next = epsilon_greedy(Q[s_next], epsilon, rng)
            Q[s, a] += alpha * (r + (0.0 if terminated else gamma * Q[s_next, a_next]) - Q[s, a])
            s, a = s_next, a_next
    return Q, returns


