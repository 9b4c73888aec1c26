"""SARSA reads truncated before terminated: a step flagged both (the time limit falls on the step that ends the task)
chooses a' and bootstraps, though the transition is terminal and its target is r."""
BREAKS = "sarsa"
NAMED_BY = ["на шаге, где и terminated, и truncated, цель бутстрапит"]
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
            if truncated or not terminated:  # the mistake: a cut step bootstraps even when it is also terminal
                a_next = epsilon_greedy(Q[s_next], epsilon, rng)
                target = r + gamma * Q[s_next, a_next]
            else:
                target = r
            Q[s, a] += alpha * (target - Q[s, a])
            if not done:
                s, a = s_next, a_next
        episode_returns[episode] = total
    return Q, episode_returns
