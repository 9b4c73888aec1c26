"""log_softmax as the log of a stable softmax, np.log(exp(z − max) / Σ exp(z − max)): with logits about 1000 apart
the small probability underflows to 0 and its log is −inf, while z − logsumexp(z) gives −1000 exactly. Breaks
log_softmax; rejected by «log_softmax: [1, 2, 3] и устойчивость …», which now also takes logits 1000 apart."""
BREAKS = "log_softmax"
NAMED_BY = ["без log от вероятностей"]  # the hint that names this mistake in the first block
import numpy as np


def log_softmax(logits):
    z = np.asarray(logits, dtype=float)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return np.log(e / e.sum(axis=-1, keepdims=True))  # the mistake: the log of a probability that underflows
