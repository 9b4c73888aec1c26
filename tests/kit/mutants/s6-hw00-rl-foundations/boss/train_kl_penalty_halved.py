"""train passes β/2 to token_rewards: half the KL penalty the caller asked for (the policy drifts further from the
SFT model than the objective E[r] − β·KL wants). Only the audit of one run in the grade tells it (its history
recomputed by the key's rule, the mistake named): every public check of train sees a β that changes the history and a
run that learns."""
BREAKS = "train"
NAMED_BY = ["половин"]
CAUGHT_BY = "grade"
import numpy as np

import toy_lm


def train(n_updates=40, seed=0, batch_size=64, algo="ppo", beta=0.02, gamma=1.0, lam=0.95, lr=0.05, n_epochs=4,
          n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01, group_size=8, vapo_alpha=None, log_every=5, tables=None):
    rng = np.random.default_rng(seed)
    ref_theta = toy_lm.reference_theta()
    theta = ref_theta.copy()  # политика стартует копией SFT-модели π_ref
    w = np.zeros(theta.shape[:3])  # критик: V(s_t) = w[p, t, prev]
    opt = init_optimizer(theta, w)
    history = []
    for update in range(1, n_updates + 1):
        # 1. промпты батча; у GRPO — группы по group_size ответов на один промпт
        if algo == "grpo":
            prompt_ids = np.repeat(rng.integers(toy_lm.N_PROMPTS, size=batch_size // group_size), group_size)
        else:
            prompt_ids = rng.integers(toy_lm.N_PROMPTS, size=batch_size)
        # 2. ответы текущей политики (π_old этого обновления) и их оценки reward model
        batch = sample_answers(theta, w, ref_theta, prompt_ids, rng)
        scores = toy_lm.score_batch(prompt_ids, batch["tokens"])
        mask = batch["mask"]
        # 3. преимущества Â_t и цели критика R̂_t
        if algo == "grpo":  # групповое преимущество — на всех токенах ответа; критика нет
            batch["adv"] = grpo_advantages(scores, group_size)[:, None] * mask
            batch["returns"] = np.zeros_like(mask)
        else:  # награды по токенам (оценка в конце минус KL-штраф) и GAE
            # the mistake: half the penalty
            rewards = token_rewards(scores, batch["logp"], batch["ref_logp"], mask, beta / 2)
            lams = lam if vapo_alpha is None else vapo_lambda(batch["lengths"], vapo_alpha)  # VAPO: своё λ у ответа
            batch["adv"], batch["returns"] = token_gae(rewards, batch["values"], mask, gamma, lams)
        # 4. мониторинг в состояниях батча — до обновления
        states = (prompt_ids[:, None], np.arange(mask.shape[1])[None, :], batch["prev"])
        kl_ref, entropy = kl_and_entropy(theta[states], ref_theta[states], mask)
        # 5. эпохи PPO по мини-батчам; новые theta, w и opt идут в следующее обновление
        theta, w, opt, stats = ppo_update(theta, w, batch, rng, opt, lr, n_epochs, n_minibatches, eps, c_v, c_e,
                                          algo, beta)
        history.append({"update": update, "score": float(scores.mean()), "kl_ref": kl_ref, "entropy": entropy,
                        **stats, "n_answers": update * len(prompt_ids)})
        if log_every and (update % log_every == 0 or update == 1):
            h = history[-1]
            print(f"обновление {update:3d}  оценка {h['score']:.3f}  KL к реф. {h['kl_ref']:.3f}  "
                  f"энтропия {h['entropy']:.3f}  clipfrac {h['clipfrac']:.3f}  approx_kl {h['approx_kl']:.4f}")
    if tables is not None:  # бонус: итоговая политика и критик — для точной оценки политики перебором
        tables["theta"], tables["w"] = theta, w
    return history
