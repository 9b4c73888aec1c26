"""ppo_loss normalizes the advantages itself: the lesson's ppo_loss takes Â as given (normalization is a
separate step before it), so the lesson's example no longer gives 0.196."""
BREAKS = "ppo_loss"
NAMED_BY = ["ppo_loss сам нормирует преимущества"]

_reference_ppo_loss = ppo_loss  # noqa: F821 - the reference, defined above in the module


def ppo_loss(logp_new, logp_old, adv, values_pred, returns, entropy, eps=0.2, c_v=0.5, c_e=0.01):
    return _reference_ppo_loss(logp_new, logp_old, normalize_advantages(adv), values_pred, returns,  # noqa: F821
                               entropy, eps, c_v, c_e)


