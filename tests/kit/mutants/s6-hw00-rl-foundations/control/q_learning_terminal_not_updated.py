"""Q-learning leaves the loop on `terminated` before the update: the last step into the goal never updates
Q(s, a), though its target is just r."""
BREAKS = "q_learning"
NAMED_BY = ["на последнем шаге (terminated) Q(s, a) не обновляется"]
import numpy as np


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    episode_returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        total = 0.0
        while True:
            a = epsilon_greedy(Q[s], epsilon, rng)
            s_next, r, terminated, truncated, _ = env.step(a)
            total += r
            if terminated:
                break  # the mistake: "the terminal state has no future", so no update at all
            Q[s, a] += alpha * (r + gamma * Q[s_next].max() - Q[s, a])
            s = s_next
            if truncated:
                break
        episode_returns[episode] = total
    return Q, episode_returns


