"""The last real token bootstraps from the critic's value at the padding position instead of V = 0."""
BREAKS = "token_gae"
NAMED_BY = ["последний токен бутстрапит V паддинга"]
import numpy as np


def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    mask = np.asarray(mask, dtype=float)
    r = np.asarray(rewards, dtype=float) * mask
    v_all = np.asarray(values, dtype=float)
    v = v_all * mask
    B, L = mask.shape
    next_mask = np.concatenate([mask[:, 1:], np.zeros((B, 1))], axis=1)
    next_v = np.concatenate([v_all[:, 1:], np.zeros((B, 1))], axis=1)
    delta = (r + gamma * next_v - v) * mask
    adv = np.zeros((B, L))
    running = np.zeros(B)
    for t in reversed(range(L)):
        running = delta[:, t] + gamma * lam * next_mask[:, t] * running
        adv[:, t] = running
    return adv, (adv + v) * mask


