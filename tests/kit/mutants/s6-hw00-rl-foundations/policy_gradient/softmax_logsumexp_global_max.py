"""softmax as exp(z − logsumexp(z)) with the log-sum-exp shifted by the global maximum instead of each row's: in a
batch whose rows lie 2000 apart the far row's sum underflows to 0, log 0 = −inf, and the row comes out NaN (or inf).
Breaks softmax; rejected by «softmax численно устойчив …», which now also takes a batch [2, 3] with large logits in
every row."""
BREAKS = "softmax"
NAMED_BY = ["Один максимум всего массива"]  # the hint that names this mistake in the first block
import numpy as np


def softmax(z):
    z = np.asarray(z, dtype=float)
    m = z.max()  # the mistake: one shift for the whole batch
    log_norm = m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True))
    return np.exp(z - log_norm)
