"""clipfrac counts every position of the minibatch, padding included, instead of the real tokens only."""
BREAKS = "ppo_update"
NAMED_BY = ["доля по всем позициям, вместе с паддингом"]
import numpy as np

_reference_actor_loss = _actor_loss  # noqa: F821 - the reference, defined above in the module


def _actor_loss(logits, actions, logp_old, adv, mask, eps=0.2, c_e=0.01, ref_logp=None, beta=0.0):
    loss, dlogits, pi_info = _reference_actor_loss(logits, actions, logp_old, adv, mask, eps, c_e, ref_logp, beta)
    logp = np.take_along_axis(log_softmax(logits), np.asarray(actions)[..., None], axis=-1)[..., 0]  # noqa: F821
    ratio = np.exp(logp - logp_old)  # ρ_t at every position
    # the mistake: padding counted
    return loss, dlogits, dict(pi_info, clipfrac=float(np.mean(np.abs(ratio - 1) > eps)))


