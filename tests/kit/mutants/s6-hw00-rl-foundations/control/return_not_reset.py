"""The episode's return is not reset at the start of an episode: episode_returns accumulate over episodes."""
BREAKS = "q_learning"
NAMED_BY = ["отдача не обнуляется в начале эпизода"]
import numpy as np


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    returns = np.zeros(n_episodes)
    total = 0.0
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        done = False
        while not done:
            a = epsilon_greedy(Q[s], epsilon, rng)
            s_next, r, terminated, truncated, _ = env.step(a)
            Q[s, a] += alpha * (r + (0.0 if terminated else gamma * Q[s_next].max()) - Q[s, a])
            total += r
            s, done = s_next, terminated or truncated
        returns[episode] = total
    return Q, returns


