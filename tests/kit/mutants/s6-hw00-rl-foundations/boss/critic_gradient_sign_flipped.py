"""critic_loss's gradient has the wrong sign: 2·c_v·(R̂ − V)/n, so Adam moves V away from its target."""
BREAKS = "critic_loss"
NAMED_BY = ["знак градиента перевёрнут: 2(R̂ − V) вместо 2(V − R̂)"]
import numpy as np


def critic_loss(values_pred, returns, mask, c_v=0.5):
    mask = np.asarray(mask, dtype=float)
    err = (np.asarray(values_pred, dtype=float) - np.asarray(returns, dtype=float)) * mask
    n = mask.sum()
    return float(c_v * (err ** 2).sum() / n), -2 * c_v * err / n  # ∂/∂V (V − R̂)² = 2(V − R̂)


