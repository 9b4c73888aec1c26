"""The gradient of the clipped branch is not zeroed: ρ·Â flows back through every token."""
BREAKS = "policy_loss"
NAMED_BY = ["градиент клиппированной ветки не обнулён"]
import numpy as np


def policy_loss(logits, actions, logp_old, adv, mask, eps=0.2, c_e=0.01):
    logp_all = log_softmax(logits)
    probs = np.exp(logp_all)
    actions = np.asarray(actions, dtype=int)
    mask, adv = np.asarray(mask, dtype=float), np.asarray(adv, dtype=float)
    n = mask.sum()
    logp = np.take_along_axis(logp_all, actions[..., None], axis=-1)[..., 0]
    ratio = np.exp(logp - np.asarray(logp_old, dtype=float))
    entropy = -(probs * logp_all).sum(axis=-1)
    objective = np.minimum(ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv)
    loss = -(mask * objective).sum() / n - c_e * (mask * entropy).sum() / n
    onehot = np.zeros_like(probs)
    np.put_along_axis(onehot, actions[..., None], 1.0, axis=-1)
    dlogits = -(mask * ratio * adv)[..., None] * (onehot - probs) / n
    dlogits += c_e * mask[..., None] * probs * (logp_all + entropy[..., None]) / n
    return float(loss), dlogits


