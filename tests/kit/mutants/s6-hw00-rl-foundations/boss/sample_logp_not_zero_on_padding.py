"""sample_answers fills logp, ref_logp and values on the padding too (the EOS written there, in the
state after the end) instead of the 0 its docstring promises."""
import numpy as np


def sample_answers(theta, w, ref_theta, prompt_ids, rng):
    prompt = np.asarray(prompt_ids, dtype=int)
    B, L = len(prompt), theta.shape[1]
    rows = np.arange(B)
    out = {name: np.zeros((B, L)) for name in ("mask", "logp", "ref_logp", "values")}
    tokens = np.full((B, L), toy_lm.EOS)
    prev = np.full((B, L), toy_lm.EOS)
    alive = np.ones(B, dtype=bool)  # ответ ещё не закончился
    prev_tok = np.full(B, toy_lm.BOS)
    for t in range(L):
        logp_all = log_softmax(theta[prompt, t, prev_tok])  # [B, V]
        cdf = np.cumsum(np.exp(logp_all), axis=1)
        a = np.minimum((rng.random(B)[:, None] > cdf).sum(axis=1), cdf.shape[1] - 1)  # обратная функция распределения
        a = np.where(alive, a, toy_lm.EOS)
        tokens[:, t], prev[:, t] = a, np.where(alive, prev_tok, toy_lm.EOS)
        out["mask"][:, t] = alive
        out["logp"][:, t] = logp_all[rows, a]
        out["ref_logp"][:, t] = log_softmax(ref_theta[prompt, t, prev_tok])[rows, a]
        out["values"][:, t] = w[prompt, t, prev_tok]
        alive = alive & (a != toy_lm.EOS)
        prev_tok = a
    out.update(prompt=prompt.copy(), tokens=tokens, prev=prev, lengths=out["mask"].sum(axis=1).astype(int))
    return out


CAUGHT_BY = ["test_sample_answers_consistent"]
