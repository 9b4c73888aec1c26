"""q_learning chooses its actions inline instead of through epsilon_greedy, with a bare np.argmax: ties go to the
first action, not to a random one of the best (at the start Q = 0 everywhere, so every first action is 0). Breaks
q_learning; rejected by «q_learning: в начале обучения (Q = 0 везде) ничьи разбиваются случайно …»."""
BREAKS = "q_learning"
NAMED_BY = ["ничья разбита первым по номеру действием"]
import numpy as np


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    episode_returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        total, done = 0.0, False
        while not done:
            if rng.random() < epsilon:  # the mistake: no epsilon_greedy, and argmax takes the first of equals
                a = int(rng.integers(Q.shape[1]))
            else:
                a = int(np.argmax(Q[s]))
            s_next, r, terminated, truncated, _ = env.step(a)
            target = r + (0.0 if terminated else gamma * Q[s_next].max())
            Q[s, a] += alpha * (target - Q[s, a])
            total += r
            s, done = s_next, terminated or truncated
        episode_returns[episode] = total
    return Q, episode_returns
