"""δ_t forgets the bootstrap: δ_t = r_t − V(s_t) instead of r_t + γ·V(s_{t+1}) − V(s_t)."""
BREAKS = "token_gae"
NAMED_BY = ["в δ_t нет γ·V(s_{t+1})"]
import numpy as np


def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    mask = np.asarray(mask, dtype=float)
    r = np.asarray(rewards, dtype=float) * mask
    v = np.asarray(values, dtype=float) * mask
    B, L = mask.shape
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (B,))
    next_mask = np.concatenate([mask[:, 1:], np.zeros((B, 1))], axis=1)  # есть ли следующий токен
    next_v = np.concatenate([v[:, 1:], np.zeros((B, 1))], axis=1) * next_mask
    delta = (r - v) * mask  # δ_t
    adv = np.zeros((B, L))
    running = np.zeros(B)
    for t in reversed(range(L)):
        running = delta[:, t] + gamma * lam * next_mask[:, t] * running  # Â_t = δ_t + γλ·Â_{t+1}
        adv[:, t] = running
    return adv, (adv + v) * mask  # R̂_t = Â_t + V(s_t)


