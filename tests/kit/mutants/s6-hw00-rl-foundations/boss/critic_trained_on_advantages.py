"""ppo_update regresses the critic onto the advantages batch["adv"] instead of the targets R̂ = Â + V
(batch["returns"])."""
BREAKS = "ppo_update"
NAMED_BY = ["критик учится на преимуществах batch['adv']"]

_reference_ppo_update = ppo_update  # noqa: F821 - the reference, defined above in the module


def ppo_update(theta, w, batch, rng, opt, *args, **kwargs):
    return _reference_ppo_update(theta, w, dict(batch, returns=batch["adv"]), rng, opt, *args, **kwargs)


