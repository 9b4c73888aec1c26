"""ppo_update always splits the batch into 4 minibatches, whatever n_minibatches says."""
import numpy as np


def ppo_update(theta, w, batch, rng, opt, lr=0.05, n_epochs=4, n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01,
               algo="ppo", beta=0.02):
    theta, w = np.array(theta, dtype=float), np.array(w, dtype=float)
    opt = {k: (np.array(x) if isinstance(x, np.ndarray) else x) for k, x in opt.items()}
    prompt, prev, tokens, mask = batch["prompt"], batch["prev"], batch["tokens"], batch["mask"]
    B, L = mask.shape
    t_idx = np.arange(L)[None, :]
    stats = {"clipfrac": [], "approx_kl": [], "value_loss": []}
    for _ in range(n_epochs):
        perm = rng.permutation(B)
        for idx in np.array_split(perm, 4):
            where = (prompt[idx][:, None], t_idx, prev[idx])  # состояния мини-батча, [b, L]
            logits, m = theta[where], mask[idx]
            logp_old = batch["logp"][idx]
            if algo == "grpo":
                loss_pi, dlogits = grpo_policy_loss(logits, tokens[idx], logp_old, batch["ref_logp"][idx],
                                                    batch["adv"][idx], m, eps, beta)
                loss_v, dvalues = 0.0, np.zeros((len(idx), L))
            else:
                adv = masked_normalize(batch["adv"][idx], m)
                loss_pi, dlogits = policy_loss(logits, tokens[idx], logp_old, adv, m, eps, c_e)
                loss_v, dvalues = critic_loss(w[where], batch["returns"][idx], m, c_v)
            logp = np.take_along_axis(log_softmax(logits), tokens[idx][..., None], axis=-1)[..., 0]
            ratio = np.exp(logp - logp_old)
            n = m.sum()
            stats["clipfrac"].append(float((m * (np.abs(ratio - 1) > eps)).sum() / n))
            stats["approx_kl"].append(float((m * (logp_old - logp)).sum() / n))
            stats["value_loss"].append(loss_v)
            g_theta, g_w = np.zeros_like(theta), np.zeros_like(w)
            np.add.at(g_theta, where, dlogits)
            np.add.at(g_w, where, dvalues)
            opt["t"] += 1
            theta, opt["m_theta"], opt["v_theta"] = adam_step(theta, g_theta, opt["m_theta"], opt["v_theta"],
                                                              opt["t"], lr)
            if algo != "grpo":
                w, opt["m_w"], opt["v_w"] = adam_step(w, g_w, opt["m_w"], opt["v_w"], opt["t"], lr)
    return theta, w, opt, {k: float(np.mean(x)) for k, x in stats.items()}


CAUGHT_BY = ["test_ppo_update_replay"]
