"""softmax shifts the logits by the first one, z − z_0, instead of the largest: wherever a later logit is more than
709 above the first, exp overflows to inf and the answer holds NaN."""
BREAKS = "softmax"
NAMED_BY = []
import numpy as np


def softmax(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z[..., :1])  # the mistake: the first logit, not the largest
    return e / e.sum(axis=-1, keepdims=True)
