"""The critic's gradient forgets the factor 2 of ∂(V − R̂)²/∂V."""
BREAKS = "critic_loss"
NAMED_BY = ["потерян множитель 2"]
import numpy as np


def critic_loss(values_pred, returns, mask, c_v=0.5):
    mask = np.asarray(mask, dtype=float)
    err = (np.asarray(values_pred, dtype=float) - np.asarray(returns, dtype=float)) * mask
    n = mask.sum()
    return float(c_v * (err ** 2).sum() / n), c_v * err / n


