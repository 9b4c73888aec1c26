"""log_softmax subtracts the maximum of the whole array (z.max(), no axis): right for one vector, but in a batch a
row whose logits lie about 2000 below the global maximum underflows, Σ exp = 0, and log 0 gives −inf and NaN. Breaks
log_softmax; rejected by «log_softmax: [1, 2, 3] и устойчивость …», which now also takes a batch with large logits in
every row."""
BREAKS = "log_softmax"
NAMED_BY = ["Один max всего массива"]  # the hint that names this mistake in the first block
import numpy as np


def log_softmax(logits):
    z = np.asarray(logits, dtype=float)
    z = z - z.max()  # the mistake: the global max, not the max of each row
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
