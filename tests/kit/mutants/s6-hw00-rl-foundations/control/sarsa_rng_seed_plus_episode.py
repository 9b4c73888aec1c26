"""SARSA creates a new generator in every episode, rng = default_rng(seed + episode): the run for seed + 1 repeats the
run for seed shifted by one episode. Breaks sarsa; rejected by «sarsa детерминирован …», which now compares the
actions of seed 30 and seed 31 at ε = 1."""
BREAKS = "sarsa"
NAMED_BY = ["default_rng(seed + номер эпизода)"]
import numpy as np


def sarsa(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    episode_returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        rng = np.random.default_rng(seed + episode)  # the mistake: one generator per episode
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
                target = r + gamma * Q[s_next, a_next]
            Q[s, a] += alpha * (target - Q[s, a])
            if not done:
                s, a = s_next, a_next
        episode_returns[episode] = total
    return Q, episode_returns
