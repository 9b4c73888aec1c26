"""The gradient variance is taken over all steps of the run instead of the first 200."""
BREAKS = "reinforce_bandit"
NAMED_BY = ["дисперсия по всем шагам запуска"]
import numpy as np


def reinforce_bandit(use_baseline, seed, steps=2000, lr=0.01):
    rng = np.random.default_rng(seed)
    means = np.array([10.0, 10.5, 9.5])
    theta, b, grads = np.zeros(3), 0.0, []
    for t in range(steps):
        pi = softmax(theta)
        a = rng.choice(3, p=pi)
        r = means[a] + rng.normal(0, 1)
        g = (r - b if use_baseline else r) * grad_log_softmax(theta, a)
        grads.append(g)  # the mistake: every step
        theta = theta + lr * g
        b += 0.05 * (r - b)
    return pi, float(np.var(np.array(grads), axis=0).sum())


