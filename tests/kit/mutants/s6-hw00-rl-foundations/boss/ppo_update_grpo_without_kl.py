"""ppo_update's GRPO branch leaves out the KL term: algo="grpo" minimises the clipped objective alone (no −β·k3 towards
π_ref, beta unused), while everything else is right. Breaks ppo_update with algo="grpo"; rejected by «Бонус: обновление
GRPO …», whose gate the GRPO replay of train needs."""
BREAKS = "ppo_update"
NAMED_BY = ["нет KL-слагаемого β·k3 в loss GRPO"]
import numpy as np


def ppo_update(theta, w, batch, rng, opt, lr=0.05, n_epochs=4, n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01,
               algo="ppo", beta=0.02):
    theta, w = np.array(theta, dtype=float), np.array(w, dtype=float)  # копии: входы не меняются
    opt = {key: (np.array(x) if isinstance(x, np.ndarray) else x) for key, x in opt.items()}
    B, L = batch["mask"].shape
    positions = np.arange(L)[None, :]
    stats = {"clipfrac": [], "approx_kl": [], "value_loss": []}
    for _ in range(n_epochs):
        perm = rng.permutation(B)
        for idx in np.array_split(perm, n_minibatches):
            # 1. состояния мини-батча s_t = (промпт, t, пред. токен) — индексы в таблицах theta и w, [b, L]
            states = (batch["prompt"][idx][:, None], positions, batch["prev"][idx])
            tokens, mb_mask, logp_old = batch["tokens"][idx], batch["mask"][idx], batch["logp"][idx]
            if algo == "grpo":  # бонус: Â группы без нормировки, KL к π_ref в loss, критика нет
                # the mistake: no KL term (no ref_logp, no beta): the clipped objective alone
                _, dlogits, pi_info = _actor_loss(theta[states], tokens, logp_old, batch["adv"][idx], mb_mask, eps,
                                                  c_e=0.0)
                loss_v, dvalues = 0.0, np.zeros((len(idx), L))
            else:
                # 2. Â нормируется по настоящим токенам мини-батча
                adv = masked_normalize(batch["adv"][idx], mb_mask)
                # 3. policy_loss (его тело _actor_loss отдаёт и pi_info) с logp_old из батча; critic_loss с целями R̂_t
                _, dlogits, pi_info = _actor_loss(theta[states], tokens, logp_old, adv, mb_mask, eps, c_e=c_e)
                loss_v, dvalues = critic_loss(w[states], batch["returns"][idx], mb_mask, c_v)
            # 4. градиенты по логитам и V — в таблицы; np.add.at складывает вклады повторов одного состояния
            grad_theta, grad_w = np.zeros_like(theta), np.zeros_like(w)
            np.add.at(grad_theta, states, dlogits)
            np.add.at(grad_w, states, dvalues)
            # 5. шаг Adam; счётчик шагов продолжается между обновлениями
            opt["t"] += 1
            theta, opt["m_theta"], opt["v_theta"] = adam_step(theta, grad_theta, opt["m_theta"], opt["v_theta"],
                                                              opt["t"], lr)
            if algo != "grpo":
                w, opt["m_w"], opt["v_w"] = adam_step(w, grad_w, opt["m_w"], opt["v_w"], opt["t"], lr)
            # 6. статистика — до шага: pi_info посчитан вместе с loss актора
            stats["clipfrac"].append(pi_info["clipfrac"])
            stats["approx_kl"].append(pi_info["approx_kl"])
            stats["value_loss"].append(loss_v)
    return theta, w, opt, {k: float(np.mean(x)) for k, x in stats.items()}


