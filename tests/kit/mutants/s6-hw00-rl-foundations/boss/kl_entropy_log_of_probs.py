"""kl_and_entropy takes the log of the probabilities, np.log(softmax): where a logit lies about 1000 below the others
its probability underflows to 0, log 0 = −inf, and 0·(−inf) makes KL and the entropy NaN (π·log π → 0 needs the
log-probabilities from log_softmax). Breaks kl_and_entropy; rejected by «Мониторинг: точный KL к референсу …», which
now also takes logits 1000 apart."""
BREAKS = "kl_and_entropy"
NAMED_BY = ["не логарифм вероятностей softmax"]  # the hint that names this mistake in the first block
import numpy as np


def kl_and_entropy(logits, ref_logits, mask):
    mask = np.asarray(mask, dtype=float)
    probs, ref_probs = np.exp(log_softmax(logits)), np.exp(log_softmax(ref_logits))
    kl = (probs * (np.log(probs) - np.log(ref_probs))).sum(axis=-1)  # the mistake: log of probabilities
    entropy = -(probs * np.log(probs)).sum(axis=-1)
    return float((kl * mask).sum() / mask.shape[0]), float((entropy * mask).sum() / mask.sum())
