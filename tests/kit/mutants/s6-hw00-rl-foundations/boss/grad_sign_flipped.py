"""policy_loss returns the gradient of the objective (to maximize) with the loss to minimize: the sign of
dlogits is flipped."""
BREAKS = "policy_loss"
NAMED_BY = ["знак градиента перевёрнут: это градиент цели", "знак градиента перевёрнут"]
import numpy as np


def policy_loss(logits, actions, logp_old, adv, mask, eps=0.2, c_e=0.01):
    logp_all = log_softmax(logits)  # [..., V]
    probs = np.exp(logp_all)
    actions = np.asarray(actions, dtype=int)
    mask = np.asarray(mask, dtype=float)
    adv = np.asarray(adv, dtype=float)
    n = mask.sum()
    logp = np.take_along_axis(logp_all, actions[..., None], axis=-1)[..., 0]
    ratio = np.exp(logp - np.asarray(logp_old, dtype=float))  # ρ_t
    unclipped, clipped = ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv
    entropy = -(probs * logp_all).sum(axis=-1)  # H(π(·|s_t))
    loss = -(mask * np.minimum(unclipped, clipped)).sum() / n - c_e * (mask * entropy).sum() / n
    d_logp = np.where(unclipped <= clipped, ratio * adv, 0.0)  # градиент только у ветки ρ·Â
    onehot = np.zeros_like(probs)
    np.put_along_axis(onehot, actions[..., None], 1.0, axis=-1)
    dlogits = -(mask * d_logp)[..., None] * (onehot - probs) / n  # −∂min/∂log π · ∂log π/∂z
    dlogits += c_e * mask[..., None] * probs * (logp_all + entropy[..., None]) / n  # −c_e·∂H/∂z
    return float(loss), -dlogits


