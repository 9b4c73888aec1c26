"""kl_optimal_policy with the sign of the exponent flipped: π_ref·exp(−r/β), the policy that avoids the reward."""
BREAKS = "kl_optimal_policy"
NAMED_BY = ["знак в показателе перевёрнут"]
import numpy as np


def kl_optimal_policy(ref_logp, rewards, beta):
    ref_logp, rewards = np.asarray(ref_logp, dtype=float), np.asarray(rewards, dtype=float)
    log_probs = log_softmax(ref_logp - rewards / beta)  # the mistake
    probs = np.exp(log_probs)
    return probs, float(probs @ rewards), float(probs @ (log_probs - ref_logp))
