"""ppo_update recomputes the "old" log-probabilities from the current tables in every minibatch:
ρ is always 1, the clip never acts and PPO degenerates into repeated vanilla policy-gradient steps."""
import numpy as np

_reference_ppo_update = ppo_update  # noqa: F821 - the reference, defined above in the module


def ppo_update(theta, w, batch, rng, opt, lr=0.05, n_epochs=4, n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01,
               algo="ppo", beta=0.02):
    theta, w = np.array(theta, dtype=float), np.array(w, dtype=float)
    opt = {k: (np.array(x) if isinstance(x, np.ndarray) else x) for k, x in opt.items()}
    prompt, prev, tokens, mask = batch["prompt"], batch["prev"], batch["tokens"], batch["mask"]
    B, L = mask.shape
    t_idx = np.arange(L)[None, :]
    stats = {"clipfrac": [], "approx_kl": [], "value_loss": []}
    for _ in range(n_epochs):
        for idx in np.array_split(rng.permutation(B), n_minibatches):
            where = (prompt[idx][:, None], t_idx, prev[idx])
            logits, m = theta[where], mask[idx]
            logp_old = np.take_along_axis(log_softmax(logits), tokens[idx][..., None], axis=-1)[..., 0] * m
            adv = masked_normalize(batch["adv"][idx], m)
            _, dlogits = policy_loss(logits, tokens[idx], logp_old, adv, m, eps, c_e)
            loss_v, dvalues = critic_loss(w[where], batch["returns"][idx], m, c_v)
            stats["clipfrac"].append(0.0)
            stats["approx_kl"].append(0.0)
            stats["value_loss"].append(loss_v)
            g_theta, g_w = np.zeros_like(theta), np.zeros_like(w)
            np.add.at(g_theta, where, dlogits)
            np.add.at(g_w, where, dvalues)
            opt["t"] += 1
            theta, opt["m_theta"], opt["v_theta"] = adam_step(theta, g_theta, opt["m_theta"], opt["v_theta"], opt["t"], lr)
            w, opt["m_w"], opt["v_w"] = adam_step(w, g_w, opt["m_w"], opt["v_w"], opt["t"], lr)
    return theta, w, opt, {k: float(np.mean(x)) for k, x in stats.items()}


CAUGHT_BY = ["test_ppo_update_replay", "test_train_deterministic_and_monitoring"]
