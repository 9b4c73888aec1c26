"""grpo_advantages normalises the scores in place (groups −= mean; groups /= std + eps) on a reshaped view: for a
float64 array np.asarray and reshape make no copy, so the caller's scores are overwritten with the advantages. Breaks
grpo_advantages; rejected by «Бонус: групповое преимущество GRPO …», which now checks that the scores are left
unchanged."""
BREAKS = "grpo_advantages"
NAMED_BY = ["изменила аргумент `scores` на месте"]  # the hint that names this mistake in the first block
import numpy as np


def grpo_advantages(scores, group_size, eps=1e-8):
    groups = np.asarray(scores, dtype=float).reshape(-1, group_size)  # the mistake: a view of the caller's array
    groups -= groups.mean(axis=1, keepdims=True)
    groups /= groups.std(axis=1, keepdims=True) + eps
    return groups.reshape(-1)
