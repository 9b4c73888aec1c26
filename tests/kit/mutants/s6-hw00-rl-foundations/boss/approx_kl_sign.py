"""approx_kl with the sign flipped: mean(log π_θ − logp_old) instead of mean(logp_old − log π_θ)."""
BREAKS = "ppo_update"
NAMED_BY = ["знак перевёрнут: log π_θ − logp_old"]
_reference_actor_loss = _actor_loss  # noqa: F821 - the reference, defined above in the module


def _actor_loss(*args, **kwargs):
    loss, dlogits, pi_info = _reference_actor_loss(*args, **kwargs)
    return loss, dlogits, dict(pi_info, approx_kl=-pi_info["approx_kl"])  # the mistake: mean(log π_θ − logp_old)


