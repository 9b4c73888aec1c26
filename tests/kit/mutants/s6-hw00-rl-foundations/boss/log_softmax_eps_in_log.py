"""log_softmax as np.log(softmax + 1e-12), the «safe log»: with logits about 1000 apart the answer is log 1e-12 ≈
−27.6 instead of −1000 (and every log-probability is off by up to 1e-12/π). Breaks log_softmax; rejected by
«log_softmax: [1, 2, 3] и устойчивость …», which now also takes logits 1000 apart."""
BREAKS = "log_softmax"
NAMED_BY = ["log от вероятностей с добавкой eps"]
import numpy as np


def log_softmax(logits):
    z = np.asarray(logits, dtype=float)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return np.log(e / e.sum(axis=-1, keepdims=True) + 1e-12)  # the mistake: eps inside the log
