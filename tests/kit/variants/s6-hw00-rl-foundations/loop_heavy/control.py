"""A deliberately plain, loop-heavy but correct solution of the part `control` (a kit test variant, not the reference).

Written the way a student who knows Python better than NumPy would: Q is a list of lists, maxima are found
by loops. The order of the random draws in epsilon_greedy differs on purpose from the obvious one (the
statement does not prescribe it): exploration is decided first with rng.random(), the random action comes from
rng.integers(A), and a greedy tie is broken with rng.integers(len(best)). NumPy is used only for the returned
arrays.
"""
import numpy as np


def epsilon_greedy(q_values, epsilon, rng):
    q = [float(x) for x in q_values]
    if rng.random() < epsilon:
        return int(rng.integers(len(q)))
    top = q[0]
    for x in q:
        if x > top:
            top = x
    best = []
    for a in range(len(q)):
        if q[a] == top:
            best.append(a)
    if len(best) == 1:
        return best[0]
    return best[int(rng.integers(len(best)))]


def _empty_q(env):
    n_states = env.observation_space.n
    n_actions = env.action_space.n
    Q = []
    for _s in range(n_states):
        Q.append([0.0] * n_actions)
    return Q


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = _empty_q(env)
    returns = []
    for episode in range(n_episodes):
        if episode == 0:
            s, _info = env.reset(seed=seed)
        else:
            s, _info = env.reset()
        s = int(s)
        total = 0.0
        while True:
            a = epsilon_greedy(Q[s], epsilon, rng)
            s_next, r, terminated, truncated, _info = env.step(a)
            s_next = int(s_next)
            r = float(r)
            total += r
            if terminated:
                target = r
            else:
                best_next = Q[s_next][0]
                for b in range(1, len(Q[s_next])):
                    if Q[s_next][b] > best_next:
                        best_next = Q[s_next][b]
                target = r + gamma * best_next
            Q[s][a] += alpha * (target - Q[s][a])
            s = s_next
            if terminated or truncated:
                break
        returns.append(total)
    return np.array(Q), np.array(returns)


def sarsa(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = _empty_q(env)
    returns = []
    for episode in range(n_episodes):
        if episode == 0:
            s, _info = env.reset(seed=seed)
        else:
            s, _info = env.reset()
        s = int(s)
        a = epsilon_greedy(Q[s], epsilon, rng)
        total = 0.0
        while True:
            s_next, r, terminated, truncated, _info = env.step(a)
            s_next = int(s_next)
            r = float(r)
            total += r
            if terminated:
                target = r
                a_next = None
            else:
                a_next = epsilon_greedy(Q[s_next], epsilon, rng)
                target = r + gamma * Q[s_next][a_next]
            Q[s][a] += alpha * (target - Q[s][a])
            if terminated or truncated:
                break
            s = s_next
            a = a_next
        returns.append(total)
    return np.array(Q), np.array(returns)
