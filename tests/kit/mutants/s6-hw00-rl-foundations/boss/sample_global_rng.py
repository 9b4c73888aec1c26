"""sample_answers draws from NumPy's global generator (np.random.random) instead of the rng it is given:
the same rng no longer gives the same batch, and train is not reproducible from its seed."""
BREAKS = "sample_answers"
NAMED_BY = ["вся случайность — только из аргумента rng"]
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
        u = np.random.random(B)  # the mistake: the global generator, not rng
        a = (cdf < u[:, None]).sum(axis=1)  # число токенов с cdf < u = номер первого с cdf ≥ u
        a = np.minimum(a, n_vocab - 1)  # после округления cdf[-1] может оказаться чуть меньше u
        a = np.where(alive, a, toy_lm.EOS)  # после конца ответа — паддинг
        # 3. записываем позицию t: у настоящих токенов mask = 1, log π_θ, log π_ref и V(s_t); на паддинге нули
        tokens[:, t] = a
        prev[:, t] = np.where(alive, prev_token, toy_lm.EOS)
        mask[:, t] = alive
        logp[:, t] = np.where(alive, logp_all[rows, a], 0.0)  # log π_θ(a_t|s_t)
        ref_logp[:, t] = np.where(alive, ref_logp_all[rows, a], 0.0)  # log π_ref(a_t|s_t)
        values[:, t] = np.where(alive, w[prompt, t, prev_token], 0.0)  # V(s_t)
        # 4. ответ кончается своим EOS
        alive = alive & (a != toy_lm.EOS)
        prev_token = a
    return {"prompt": prompt.copy(), "tokens": tokens, "prev": prev, "mask": mask,
            "lengths": mask.sum(axis=1).astype(int), "logp": logp, "ref_logp": ref_logp, "values": values}


