"""Token GAE ignores the mask: the recursion runs over the padding, whose rewards and values leak into the answer."""
BREAKS = "token_gae"
NAMED_BY = ["GAE не остановлен на конце ответа"]
import numpy as np


def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    mask = np.asarray(mask, dtype=float)
    r, v = np.asarray(rewards, dtype=float), np.asarray(values, dtype=float)
    B, L = r.shape
    next_v = np.concatenate([v[:, 1:], np.zeros((B, 1))], axis=1)
    delta = r + gamma * next_v - v
    adv = np.zeros((B, L))
    running = np.zeros(B)
    for t in reversed(range(L)):
        running = delta[:, t] + gamma * lam * running
        adv[:, t] = running
    return adv * mask, (adv + v) * mask


