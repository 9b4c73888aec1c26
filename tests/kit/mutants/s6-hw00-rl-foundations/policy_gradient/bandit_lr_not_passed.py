"""reinforce_bandit ignores its lr and always steps with 0.01 (the default written into the code)."""
BREAKS = "reinforce_bandit"
NAMED_BY = ["lr не передан дальше"]
import numpy as np


def reinforce_bandit(use_baseline, seed, steps=2000, lr=0.01):
    rng = np.random.default_rng(seed)
    means = np.array([10.0, 10.5, 9.5])
    theta, b, early = np.zeros(3), 0.0, []
    for t in range(steps):
        pi = softmax(theta)
        a = rng.choice(3, p=pi)
        r = means[a] + rng.normal(0, 1)
        g = (r - b if use_baseline else r) * grad_log_softmax(theta, a)
        if t < 200:
            early.append(g)
        theta = theta + 0.01 * g  # the mistake: lr is not used
        b += 0.05 * (r - b)
    return pi, float(np.var(np.array(early), axis=0).sum())


