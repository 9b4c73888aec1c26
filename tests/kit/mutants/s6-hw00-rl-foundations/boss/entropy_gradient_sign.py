"""The entropy bonus's gradient has the wrong sign: the update lowers the entropy it should reward."""
BREAKS = "policy_loss"
NAMED_BY = ["у градиента энтропийного бонуса обратный знак"]
import numpy as np

_reference_policy_loss = policy_loss  # noqa: F821 - the reference, defined above in the module


def policy_loss(logits, actions, logp_old, adv, mask, eps=0.2, c_e=0.01):
    loss, dlogits = _reference_policy_loss(logits, actions, logp_old, adv, mask, eps, c_e)
    probs = np.exp(log_softmax(logits))
    entropy = -(probs * np.log(probs)).sum(axis=-1)
    mask = np.asarray(mask, dtype=float)
    dlogits = dlogits - 2 * c_e * mask[..., None] * probs * (np.log(probs) + entropy[..., None]) / mask.sum()
    return loss, dlogits


