"""gae_with_boundaries flattens a [T, N] batch into one sequence (row after row), mixing the environments."""
BREAKS = "gae_with_boundaries"
NAMED_BY = ["батч [T, N] развёрнут в одну последовательность"]
import numpy as np

_reference_gae_with_boundaries = gae_with_boundaries  # noqa: F821 - the reference, defined above in the module


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    shape = np.shape(rewards)
    flat = [np.asarray(x).ravel() for x in (rewards, values, next_values, terminated, truncated)]
    adv, ret = _reference_gae_with_boundaries(*flat, gamma, lam)
    return adv.reshape(shape), ret.reshape(shape)


