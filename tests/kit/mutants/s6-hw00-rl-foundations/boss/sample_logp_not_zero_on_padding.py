"""sample_answers fills logp, ref_logp and values on the padding too (the EOS written there, in the
state after the end) instead of the 0 its docstring promises."""
BREAKS = "sample_answers"
NAMED_BY = ["на паддинге не обнулено"]
import numpy as np

import toy_lm


def sample_answers(theta, w, ref_theta, prompt_ids, rng):
    prompt = np.asarray(prompt_ids, dtype=int)
    B, L, n_vocab = len(prompt), theta.shape[1], theta.shape[-1]
    rows = np.arange(B)
    tokens = np.full((B, L), toy_lm.EOS)
    prev = np.full((B, L), toy_lm.EOS)
    mask, logp, ref_logp, values = (np.zeros((B, L)) for _ in range(4))
    alive = np.ones(B, dtype=bool)  # ответ ещё не закончился
    prev_token = np.full(B, toy_lm.BOS)  # токен перед позицией t в каждом ответе
    for t in range(L):
        # 1. log π_θ(·|s_t) и log π_ref(·|s_t) в состоянии s_t = (промпт, t, предыдущий токен) каждого ответа
        logp_all = log_softmax(theta[prompt, t, prev_token])  # [B, V]
        ref_logp_all = log_softmax(ref_theta[prompt, t, prev_token])  # [B, V]
        # 2. a_t ~ π_θ(·|s_t) обратной функцией распределения: первый токен, у которого cdf ≥ u, u ~ U[0, 1)
        cdf = np.cumsum(np.exp(logp_all), axis=1)  # [B, V]
        u = rng.random(B)  # одно число на ответ, на каждой позиции t
        a = (cdf < u[:, None]).sum(axis=1)  # число токенов с cdf < u = номер первого с cdf ≥ u
        a = np.minimum(a, n_vocab - 1)  # после округления cdf[-1] может оказаться чуть меньше u
        a = np.where(alive, a, toy_lm.EOS)  # после конца ответа — паддинг
        # 3. записываем позицию t (the mistake: log π_θ, log π_ref and V(s_t) not zeroed on padding)
        tokens[:, t] = a
        prev[:, t] = np.where(alive, prev_token, toy_lm.EOS)
        mask[:, t] = alive
        logp[:, t] = logp_all[rows, a]  # log π_θ(a_t|s_t)
        ref_logp[:, t] = ref_logp_all[rows, a]  # log π_ref(a_t|s_t)
        values[:, t] = w[prompt, t, prev_token]  # V(s_t)
        # 4. ответ кончается своим EOS
        alive = alive & (a != toy_lm.EOS)
        prev_token = a
    return {"prompt": prompt.copy(), "tokens": tokens, "prev": prev, "mask": mask,
            "lengths": mask.sum(axis=1).astype(int), "logp": logp, "ref_logp": ref_logp, "values": values}


