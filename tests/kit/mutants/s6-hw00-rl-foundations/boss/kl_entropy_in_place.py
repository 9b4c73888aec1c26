"""kl_and_entropy turns the logits into log-probabilities in place (logits −= logsumexp): np.asarray makes no copy of a
float64 array, so the caller's logits and ref_logits are overwritten. Breaks kl_and_entropy; rejected by
«Мониторинг: точный KL к референсу …», which now checks that its float64 inputs are left unchanged."""
BREAKS = "kl_and_entropy"
NAMED_BY = ["изменила аргумент `logits` на месте"]  # the hint that names this mistake in the first block
import numpy as np


def kl_and_entropy(logits, ref_logits, mask):
    mask = np.asarray(mask, dtype=float)
    logp_all = np.asarray(logits, dtype=float)  # the mistake: for float64 these are the caller's arrays
    ref_logp_all = np.asarray(ref_logits, dtype=float)
    for z in (logp_all, ref_logp_all):
        z -= z.max(axis=-1, keepdims=True)
        z -= np.log(np.exp(z).sum(axis=-1, keepdims=True))
    probs = np.exp(logp_all)
    kl = (probs * (logp_all - ref_logp_all)).sum(axis=-1)
    entropy = -(probs * logp_all).sum(axis=-1)
    return float((kl * mask).sum() / mask.shape[0]), float((entropy * mask).sum() / mask.sum())
