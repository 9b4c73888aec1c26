"""gae's critic targets subtract the values instead of adding them back: R̂ = Â − V."""
BREAKS = "gae"
NAMED_BY = ["returns = advantages − values"]
import numpy as np

_reference_gae = gae  # noqa: F821 - the reference, defined above in the module


def gae(rewards, values, last_value, gamma, lam):
    adv, _ = _reference_gae(rewards, values, last_value, gamma, lam)
    return adv, adv - np.asarray(values, dtype=float)


