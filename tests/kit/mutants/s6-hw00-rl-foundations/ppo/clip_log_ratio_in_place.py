"""ppo_clip_objective turns logp_new into the log-ratio in place (logp_new −= logp_old): np.asarray makes no copy of
a float64 array, so the caller's log-probabilities are overwritten. Breaks ppo_clip_objective; rejected by
«Клиппированная цель на случайных батчах …», which now checks that the float64 inputs are left unchanged."""
BREAKS = "ppo_clip_objective"
NAMED_BY = ["изменила аргумент `logp_new` на месте"]  # the hint that names this mistake in the first block
import numpy as np


def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    log_ratio = np.asarray(logp_new, dtype=float)  # the mistake: for float64 this is the caller's array
    log_ratio -= np.asarray(logp_old, dtype=float)
    ratio = np.exp(log_ratio)
    adv = np.asarray(adv, dtype=float)
    return float(np.mean(np.minimum(ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv)))
