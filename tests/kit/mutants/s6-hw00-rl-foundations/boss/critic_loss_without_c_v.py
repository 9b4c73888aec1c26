"""critic_loss forgets the weight c_v, in the loss and in its gradient."""
BREAKS = "critic_loss"
NAMED_BY = ["нет множителя c_v"]
import numpy as np


def critic_loss(values_pred, returns, mask, c_v=0.5):
    mask = np.asarray(mask, dtype=float)
    err = (np.asarray(values_pred, dtype=float) - np.asarray(returns, dtype=float)) * mask
    n = mask.sum()
    return float((err ** 2).sum() / n), 2 * err / n  # ∂/∂V (V − R̂)² = 2(V − R̂)


