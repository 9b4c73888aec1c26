"""kl_optimal_policy returns KL(π_ref ‖ π*) instead of KL(π* ‖ π_ref): the arguments of the KL swapped."""
BREAKS = "kl_optimal_policy"
NAMED_BY = ["KL с переставленными аргументами"]
import numpy as np


def kl_optimal_policy(ref_logp, rewards, beta):
    ref_logp, rewards = np.asarray(ref_logp, dtype=float), np.asarray(rewards, dtype=float)
    log_probs = log_softmax(ref_logp + rewards / beta)
    probs = np.exp(log_probs)
    return probs, float(probs @ rewards), float(np.exp(ref_logp) @ (ref_logp - log_probs))  # the mistake
