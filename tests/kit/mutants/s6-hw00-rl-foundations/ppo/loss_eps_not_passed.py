"""ppo_loss calls ppo_clip_objective without its eps: the objective is always clipped at 0.2."""
BREAKS = "ppo_loss"
NAMED_BY = ["eps не передан в ppo_clip_objective"]
import numpy as np


def ppo_loss(logp_new, logp_old, adv, values_pred, returns, entropy, eps=0.2, c_v=0.5, c_e=0.01):
    obj = ppo_clip_objective(logp_new, logp_old, adv)  # the mistake: eps dropped
    err = np.asarray(values_pred, dtype=float) - np.asarray(returns, dtype=float)
    return float(-obj + c_v * np.mean(err ** 2) - c_e * np.mean(entropy))


