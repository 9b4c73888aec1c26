"""TD errors with the sign flipped: δ_t = V(s_t) − r_t − γ·V(s_{t+1}) (as a critic's loss term is often written)."""
BREAKS = "td_errors"
NAMED_BY = ["знак перевёрнут: V(s_t) − r_t − γV(s_{t+1})"]
import numpy as np


def td_errors(rewards, values, last_value, gamma):
    r, v = np.asarray(rewards, dtype=float), np.asarray(values, dtype=float)
    return v - (r + gamma * np.append(v[1:], float(last_value)))


