"""kl_and_entropy averages the entropy over every position, padding included."""
BREAKS = "kl_and_entropy"
NAMED_BY = ["среднее по всем позициям, вместе с паддингом"]
import numpy as np


def kl_and_entropy(logits, ref_logits, mask):
    mask = np.asarray(mask, dtype=float)
    logp, ref_logp = log_softmax(logits), log_softmax(ref_logits)
    probs = np.exp(logp)
    kl = (probs * (logp - ref_logp)).sum(axis=-1)  # KL(π ‖ π_ref) в каждом состоянии
    entropy = -(probs * logp).sum(axis=-1)
    return float((kl * mask).sum() / mask.shape[0]), float(entropy.mean())


