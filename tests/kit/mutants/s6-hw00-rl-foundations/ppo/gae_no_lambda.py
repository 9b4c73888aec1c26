"""The GAE recursion multiplies by γ alone: Â_t = δ_t + γ·Â_{t+1} (λ forgotten)."""
BREAKS = "gae"
NAMED_BY = ["в рекурсии только γ, без λ"]
import numpy as np


def gae(rewards, values, last_value, gamma, lam):
    delta = td_errors(rewards, values, last_value, gamma)
    adv = np.zeros_like(delta)
    running = 0.0
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * running
        adv[t] = running
    return adv, adv + np.asarray(values, dtype=float)


