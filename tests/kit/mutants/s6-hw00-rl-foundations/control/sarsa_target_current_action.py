"""SARSA's target takes the current action a, Q(s', a), instead of the next action a' the agent takes in s'. With two
actions it is wrong only where a ≠ a', and there Q(s', a) = Q(s', 1 − a'), what a fresh draw of a' gives on those
seeds: the fork tells them apart by the seeds where it is right (this rule is right on every seed with a = a')."""
BREAKS = "sarsa"
NAMED_BY = ["в цели Q(s', a) взято текущее действие a"]
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
            if terminated:
                target = r
            else:
                a_next = epsilon_greedy(Q[s_next], epsilon, rng)
                target = r + gamma * Q[s_next, a]  # the mistake: the current action, not a'
            Q[s, a] += alpha * (target - Q[s, a])
            if not done:
                s, a = s_next, a_next
        episode_returns[episode] = total
    return Q, episode_returns
