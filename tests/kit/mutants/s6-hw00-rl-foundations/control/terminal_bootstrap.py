"""Q-learning bootstraps from the observation after `terminated` as if the episode went on."""
BREAKS = "q_learning"
NAMED_BY = ["после terminated всё равно бутстрапят"]
import numpy as np


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        done = False
        while not done:
            a = epsilon_greedy(Q[s], epsilon, rng)
            s_next, r, terminated, truncated, _ = env.step(a)
            Q[s, a] += alpha * (r + gamma * Q[s_next].max() - Q[s, a])
            returns[episode] += r
            s, done = s_next, terminated or truncated
    return Q, returns


