"""ppo_update computes ρ against the reference policy: logp_old is taken from batch["ref_logp"] (π_ref, the SFT
model) instead of batch["logp"] (π_old, the policy that collected the batch). The clip then measures the distance
to the SFT model, not the size of this update's step."""
BREAKS = "ppo_update"
NAMED_BY = ["ρ посчитано от log π_ref"]

_reference_ppo_update = ppo_update  # noqa: F821 - the reference, defined above in the module


def ppo_update(theta, w, batch, rng, opt, *args, **kwargs):
    return _reference_ppo_update(theta, w, dict(batch, logp=batch["ref_logp"]), rng, opt, *args, **kwargs)


