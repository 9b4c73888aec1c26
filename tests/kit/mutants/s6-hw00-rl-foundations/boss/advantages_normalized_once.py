"""ppo_update normalizes Â once over the whole batch before the epochs, not in every minibatch over its own
real tokens."""
BREAKS = "ppo_update"
NAMED_BY = ["Â нормировано один раз по всему батчу"]
import numpy as np

_reference_ppo_update = ppo_update  # noqa: F821 - the reference, defined above in the module


def ppo_update(theta, w, batch, rng, opt, *args, **kwargs):
    adv = masked_normalize(batch["adv"], batch["mask"])  # noqa: F821 - once, over the whole batch
    module = globals()
    keep = module["masked_normalize"]
    module["masked_normalize"] = lambda x, mask, eps=1e-8: np.asarray(x, dtype=float)  # no per-minibatch step
    try:
        return _reference_ppo_update(theta, w, dict(batch, adv=adv), rng, opt, *args, **kwargs)
    finally:
        module["masked_normalize"] = keep


