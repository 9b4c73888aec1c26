"""train starts the policy from a zero table (a uniform policy) instead of a copy of the SFT model."""
import numpy as np


def train(n_updates=40, seed=0, **kwargs):
    history = []
    rng = np.random.default_rng(seed)
    ref_theta = toy_lm.reference_theta()  # noqa: F821
    theta = np.zeros_like(ref_theta)
    w = np.zeros(theta.shape[:3])
    opt = init_optimizer(theta, w)  # noqa: F821
    for update in range(1, n_updates + 1):
        prompt_ids = rng.integers(toy_lm.N_PROMPTS, size=64)  # noqa: F821
        batch = sample_answers(theta, w, ref_theta, prompt_ids, rng)  # noqa: F821
        scores = toy_lm.score_batch(prompt_ids, batch["tokens"])  # noqa: F821
        mask = batch["mask"]
        rewards = token_rewards(scores, batch["logp"], batch["ref_logp"], mask, 0.02)  # noqa: F821
        batch["adv"], batch["returns"] = token_gae(rewards, batch["values"], mask, 1.0, 0.95)  # noqa: F821
        where = (prompt_ids[:, None], np.arange(mask.shape[1])[None, :], batch["prev"])
        kl_ref, entropy = kl_and_entropy(theta[where], ref_theta[where], mask)  # noqa: F821
        theta, w, opt, stats = ppo_update(theta, w, batch, rng, opt)  # noqa: F821
        history.append({"update": update, "score": float(scores.mean()), "kl_ref": kl_ref, "entropy": entropy,
                        **stats, "n_answers": update * 64})
    return history


CAUGHT_BY = ["test_train_deterministic_and_monitoring", "test_train_reaches_goal"]
