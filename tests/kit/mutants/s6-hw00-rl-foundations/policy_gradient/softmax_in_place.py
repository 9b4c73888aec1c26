"""softmax works in place on its input (z −= max; np.exp(z, out=z); z /= sum) to save memory: np.asarray makes no
copy of a float64 array, so the caller's logits are overwritten with probabilities. Breaks softmax; rejected by
«softmax на случайных логитах …», which now also checks that a float64 input is left unchanged."""
BREAKS = "softmax"
NAMED_BY = ["изменила аргумент `z` на месте"]  # the hint that names this mistake in the first block
import numpy as np


def softmax(z):
    z = np.asarray(z, dtype=float)  # the mistake: for float64 this is the caller's array
    z -= z.max(axis=-1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=-1, keepdims=True)
    return z
