"""kl_and_entropy measures KL(π_ref ‖ π) instead of KL(π ‖ π_ref)."""
BREAKS = "kl_and_entropy"
NAMED_BY = ["KL(π_ref ‖ π) вместо KL(π ‖ π_ref)"]
import numpy as np


def kl_and_entropy(logits, ref_logits, mask):
    mask = np.asarray(mask, dtype=float)
    logp, ref_logp = log_softmax(logits), log_softmax(ref_logits)
    probs = np.exp(logp)
    kl = (np.exp(ref_logp) * (ref_logp - logp)).sum(axis=-1)  # KL(π ‖ π_ref) в каждом состоянии
    entropy = -(probs * logp).sum(axis=-1)
    return float((kl * mask).sum() / mask.shape[0]), float((entropy * mask).sum() / mask.sum())


