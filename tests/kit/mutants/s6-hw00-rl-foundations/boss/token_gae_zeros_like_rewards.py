"""token_gae allocates the advantages with np.zeros_like(rewards), rewards converted without dtype=float: integer
rewards (a score of 1 at the end of an answer, 0 elsewhere) make an integer array, and every Â_t is truncated. Breaks
token_gae; rejected by «Замечание VAPO: оценка в конце ответа из 101 токена …», which now also passes the rewards as
np.int64."""
BREAKS = "token_gae"
NAMED_BY = ["advantages — целый массив"]
import numpy as np


def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    mask = np.asarray(mask, dtype=float)
    rewards = np.asarray(rewards)  # the mistake: no dtype=float
    r = rewards * mask
    v = np.asarray(values, dtype=float) * mask
    B, L = mask.shape
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (B,))
    next_mask = np.concatenate([mask[:, 1:], np.zeros((B, 1))], axis=1)
    next_v = np.concatenate([v[:, 1:], np.zeros((B, 1))], axis=1) * next_mask
    delta = (r + gamma * next_v - v) * mask
    adv = np.zeros_like(rewards)  # the rewards' dtype: int for integer rewards
    running = np.zeros(B)
    for t in reversed(range(L)):
        running = delta[:, t] + gamma * lam * next_mask[:, t] * running
        adv[:, t] = running
    return adv, (adv + v) * mask
