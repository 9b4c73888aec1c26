"""grpo_policy_loss takes ρ = exp(log π_θ) / exp(logp_old) and π_ref/π_θ = exp(ref_logp) / exp(log π_θ) as quotients of
probabilities: where log π < −745 they are 0/0 = NaN, so the loss is NaN (the gradient is the reference's)."""
BREAKS = "grpo_policy_loss"
NAMED_BY = []
import numpy as np


def grpo_policy_loss(logits, actions, logp_old, ref_logp, adv, mask, eps=0.2, beta=0.02):
    loss, dlogits, _ = _actor_loss(logits, actions, logp_old, adv, mask, eps, c_e=0.0, ref_logp=ref_logp, beta=beta)
    logp = np.take_along_axis(log_softmax(logits), np.asarray(actions, dtype=int)[..., None], axis=-1)[..., 0]
    logp_old, ref_logp, adv, mask = (np.asarray(x, dtype=float) for x in (logp_old, ref_logp, adv, mask))

    def objective(ratio, ref_ratio):
        k3 = ref_ratio - np.log(ref_ratio) - 1
        return (mask * (np.minimum(ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv) - beta * k3)).sum() / mask.sum()

    with np.errstate(invalid="ignore", divide="ignore"):
        quotients = np.exp(logp) / np.exp(logp_old), np.exp(ref_logp) / np.exp(logp)  # the mistake
        return float(loss + objective(np.exp(logp - logp_old), np.exp(ref_logp - logp)) - objective(*quotients)), \
            dlogits
