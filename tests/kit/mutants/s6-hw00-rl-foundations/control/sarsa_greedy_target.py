"""SARSA bootstraps with the greedy action max_b Q(s', b) (which is Q-learning) instead of Q(s', a')
for the action a' the agent takes next."""
BREAKS = "sarsa"
NAMED_BY = ["цель строится по жадному действию max_b Q(s', b) (это Q-learning)"]
import numpy as np


def sarsa(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        a = epsilon_greedy(Q[s], epsilon, rng)
        done = False
        while not done:
            s_next, r, terminated, truncated, _ = env.step(a)
            returns[episode] += r
            a_next = epsilon_greedy(Q[s_next], epsilon, rng)
            Q[s, a] += alpha * (r + (0.0 if terminated else gamma * Q[s_next].max()) - Q[s, a])
            s, a, done = s_next, a_next, terminated or truncated
    return Q, returns


