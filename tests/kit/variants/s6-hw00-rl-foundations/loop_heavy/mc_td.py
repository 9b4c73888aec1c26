"""A deliberately plain, loop-heavy but correct solution of the part `mc_td` (a kit test variant, not the reference).

Written the way a student who knows Python better than NumPy would: returns by an explicit backward loop,
every Monte Carlo and TD(0) update one transition at a time on a Python list of values. NumPy is used only
to build the returned arrays.
"""
import numpy as np


def discounted_returns(rewards, gamma):
    rewards = [float(r) for r in rewards]
    gamma = float(gamma)
    G = [0.0] * len(rewards)
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        G[t] = running
    return np.array(G)


def mc_prediction(episodes, n_states, gamma, first_visit=True, alpha=None):
    V = [0.0] * n_states
    counts = [0] * n_states
    for episode in episodes:
        states = []
        rewards = []
        for transition in episode:
            states.append(int(transition[0]))
            rewards.append(float(transition[1]))
        G = discounted_returns(rewards, gamma).tolist()
        seen = set()
        for t in range(len(states)):
            s = states[t]
            if first_visit:
                if s in seen:
                    continue
                seen.add(s)
            if alpha is None:
                counts[s] += 1
                V[s] += (G[t] - V[s]) / counts[s]
            else:
                V[s] += float(alpha) * (G[t] - V[s])
    return np.array(V)


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    if V0 is None:
        V = [0.0] * n_states
    else:
        V = [float(v) for v in V0]
    alpha = float(alpha)
    gamma = float(gamma)
    for _epoch in range(n_epochs):
        for episode in episodes:
            for transition in episode:
                s = int(transition[0])
                r = float(transition[1])
                s_next = int(transition[2])
                terminated = bool(transition[3])
                if terminated:
                    target = r
                else:
                    target = r + gamma * V[s_next]
                V[s] += alpha * (target - V[s])
    return np.array(V)
