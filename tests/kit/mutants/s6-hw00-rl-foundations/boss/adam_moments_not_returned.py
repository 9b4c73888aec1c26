"""ppo_update advances opt["t"] but returns the Adam moments it was given: the next update starts from stale
moments while the bias correction assumes many steps were taken."""
BREAKS = "ppo_update"
NAMED_BY = ["вернули старые моменты, переданные в ppo_update"]

_reference_ppo_update = ppo_update  # noqa: F821 - the reference, defined above in the module


def ppo_update(theta, w, batch, rng, opt, *args, **kwargs):
    theta, w, new_opt, stats = _reference_ppo_update(theta, w, batch, rng, opt, *args, **kwargs)
    return theta, w, dict(opt, t=new_opt["t"]), stats


