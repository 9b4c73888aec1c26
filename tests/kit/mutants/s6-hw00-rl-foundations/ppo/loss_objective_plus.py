"""The clipped objective enters the loss with a plus: L = L^CLIP + c_v·… (the objective is maximised, so −L^CLIP)."""
BREAKS = "ppo_loss"
NAMED_BY = ["цель L^CLIP взята с плюсом"]
import numpy as np


def ppo_loss(logp_new, logp_old, adv, values_pred, returns, entropy, eps=0.2, c_v=0.5, c_e=0.01):
    obj = ppo_clip_objective(logp_new, logp_old, adv, eps)
    err = np.asarray(values_pred, dtype=float) - np.asarray(returns, dtype=float)
    return float(obj + c_v * np.mean(err ** 2) - c_e * np.mean(entropy))


