"""q_learning's default discount is γ = 0.99, not the signature's 1.0: every call that passes gamma is right, a call
that leaves it out discounts."""
BREAKS = "q_learning"
NAMED_BY = []

_reference_q_learning = q_learning


def q_learning(env, n_episodes, alpha=0.5, gamma=0.99, epsilon=0.1, seed=0):  # the mistake: the default
    return _reference_q_learning(env, n_episodes, alpha=alpha, gamma=gamma, epsilon=epsilon, seed=seed)
