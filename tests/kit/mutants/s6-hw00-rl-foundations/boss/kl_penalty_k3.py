"""The per-token KL penalty uses the k3 estimate exp(Δ) − Δ − 1 with Δ = log π_ref − log π (the GRPO loss
term) instead of the InstructGPT difference log π − log π_ref."""
BREAKS = "token_rewards"
NAMED_BY = ["KL-штраф посчитан оценкой k3"]
import numpy as np


def token_rewards(scores, logp, ref_logp, mask, beta):
    mask = np.asarray(mask, dtype=float)
    logp, ref_logp = np.asarray(logp, dtype=float), np.asarray(ref_logp, dtype=float)
    delta = ref_logp - logp
    rewards = -beta * (np.exp(delta) - delta - 1) * mask  # KL-штраф на каждом токене
    last = mask.sum(axis=1).astype(int) - 1  # последний настоящий токен
    rewards[np.arange(len(last)), last] += np.asarray(scores, dtype=float)  # оценка RM — в конце ответа
    return rewards


