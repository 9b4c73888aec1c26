"""policy_loss takes ρ as a quotient of probabilities, exp(log π_θ) / exp(logp_old): where log π < −745 both are 0 in
float64 and ρ = 0/0 = NaN, so the loss is NaN (the gradient is the reference's)."""
BREAKS = "policy_loss"
NAMED_BY = ["ρ посчитано как частное exp(log π_θ) / exp(logp_old)"]
import numpy as np


def policy_loss(logits, actions, logp_old, adv, mask, eps=0.2, c_e=0.01):
    loss, dlogits, _ = _actor_loss(logits, actions, logp_old, adv, mask, eps, c_e=c_e)
    logp = np.take_along_axis(log_softmax(logits), np.asarray(actions, dtype=int)[..., None], axis=-1)[..., 0]
    logp_old, adv, mask = (np.asarray(x, dtype=float) for x in (logp_old, adv, mask))

    def objective(ratio):
        return (mask * np.minimum(ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv)).sum() / mask.sum()

    with np.errstate(invalid="ignore", divide="ignore"):
        quotient = np.exp(logp) / np.exp(logp_old)  # the mistake: π_θ / π_old as a quotient of exponentials
    return float(loss + objective(np.exp(logp - logp_old)) - objective(quotient)), dlogits
