"""kl_and_entropy computes its own log-probabilities with the maximum of the whole [B, L, V] array (z − z.max(), no
axis): a state whose logits lie far below the global maximum underflows, Σ exp = 0, and KL and the entropy come out
NaN. Breaks kl_and_entropy; rejected by «Мониторинг: точный KL к референсу …», which now also takes a state whose
logits lie 2000 below the batch's maximum."""
BREAKS = "kl_and_entropy"
NAMED_BY = ["у каждого состояния свой"]  # the hint that names this mistake in the first block
import numpy as np


def kl_and_entropy(logits, ref_logits, mask):
    mask = np.asarray(mask, dtype=float)

    def logp(x):
        z = np.asarray(x, dtype=float)
        z = z - z.max()  # the mistake: one shift for the whole batch
        return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))

    logp_all, ref_logp_all = logp(logits), logp(ref_logits)
    probs = np.exp(logp_all)
    kl = (probs * (logp_all - ref_logp_all)).sum(axis=-1)
    entropy = -(probs * logp_all).sum(axis=-1)
    return float((kl * mask).sum() / mask.shape[0]), float((entropy * mask).sum() / mask.sum())
