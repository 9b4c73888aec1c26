"""masked_normalize takes mean and std over the real tokens but does not zero the padding afterwards."""
BREAKS = "masked_normalize"
NAMED_BY = ["на паддинге не 0: результат не умножен на mask"]
import numpy as np


def masked_normalize(x, mask, eps=1e-8):
    x, mask = np.asarray(x, dtype=float), np.asarray(mask, dtype=float)
    n = mask.sum()
    mean = (x * mask).sum() / n
    std = np.sqrt((((x - mean) * mask) ** 2).sum() / n)
    return (x - mean) / (std + eps)


