"""q_learning and sarsa do not pass their epsilon on: ε-greedy always explores with the default ε = 0.1."""
BREAKS = ("q_learning", "sarsa")
NAMED_BY = ["не доходит до epsilon_greedy"]

_reference_q_learning, _reference_sarsa = q_learning, sarsa


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    return _reference_q_learning(env, n_episodes, alpha=alpha, gamma=gamma, epsilon=0.1, seed=seed)


def sarsa(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    return _reference_sarsa(env, n_episodes, alpha=alpha, gamma=gamma, epsilon=0.1, seed=seed)


