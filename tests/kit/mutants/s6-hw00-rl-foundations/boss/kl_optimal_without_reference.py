"""kl_optimal_policy normalizes exp(r/β) alone, without the weights π_ref: π* ∝ exp(r/β) (its KL still measured
against π_ref)."""
BREAKS = "kl_optimal_policy"
NAMED_BY = ["нормировка без весов π_ref"]
import numpy as np


def kl_optimal_policy(ref_logp, rewards, beta):
    ref_logp, rewards = np.asarray(ref_logp, dtype=float), np.asarray(rewards, dtype=float)
    log_probs = log_softmax(rewards / beta)  # the mistake
    probs = np.exp(log_probs)
    return probs, float(probs @ rewards), float(probs @ (log_probs - ref_logp))
