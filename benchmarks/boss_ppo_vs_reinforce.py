"""Benchmark of the part `boss`: how fast PPO, GRPO and plain REINFORCE with a baseline reach score 0.9.

    python benchmarks/boss_ppo_vs_reinforce.py          # the reference solutions (the student's copy: homework/)
    python benchmarks/boss_ppo_vs_reinforce.py --dir homework/s6-hw00-rl-foundations --seeds 0 1 2

"Reached" means: the mean batch score over the last 5 updates is ≥ 0.9 for the first time. For each
algorithm and seed it prints the number of updates, the number of sampled answers and the wall time
until then (one process, one core: OMP_NUM_THREADS=1 is set below), plus the exact expected score
and KL of REINFORCE's final policy. PPO and GRPO are the module's own `train`; REINFORCE is written
here from the module's pieces (sample_answers, token_rewards, token_gae, policy_loss, adam_step): the same task,
rewards (score + per-token KL penalty, γ = 1) and Adam, but one on-policy gradient step per batch,
∇ = mean_t (G_t − b)·∇log π(a_t|s_t) with reward-to-go G_t and the batch-mean baseline b (policy_loss at ρ = 1, no
entropy bonus, gives exactly that gradient).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from grader.boundary.loading import FolderImplementation  # noqa: E402

GOAL, WINDOW = 0.9, 5


def reached(scores):
    """Index (from 0) of the first update whose trailing 5-update mean score is ≥ 0.9, or None."""
    for i in range(WINDOW - 1, len(scores)):
        if np.mean(scores[i - WINDOW + 1:i + 1]) >= GOAL:
            return i
    return None


def reinforce(boss, toy_lm, seed, n_updates=400, batch_size=64, lr=0.1, beta=0.02):
    """Plain REINFORCE with a baseline on the same task; returns (scores per update, answers per update, theta)."""
    rng = np.random.default_rng(seed)
    ref = toy_lm.reference_theta()
    theta, w = ref.copy(), np.zeros(ref.shape[:3])
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    scores_log = []
    for step in range(1, n_updates + 1):
        prompts = rng.integers(toy_lm.N_PROMPTS, size=batch_size)
        batch = boss.sample_answers(theta, w, ref, prompts, rng)
        mask = np.asarray(batch["mask"], float)
        scores = toy_lm.score_batch(prompts, batch["tokens"])
        rewards = np.asarray(boss.token_rewards(scores, batch["logp"], batch["ref_logp"], mask, beta))
        # G_t, reward-to-go with γ = 1: the advantages of GAE with V = 0 and λ = 1
        returns, _ = boss.token_gae(rewards, np.zeros_like(mask), mask, 1.0, 1.0)
        returns = np.asarray(returns, float)
        baseline = returns[mask > 0].mean()
        where = (prompts[:, None], np.arange(mask.shape[1])[None, :], np.asarray(batch["prev"]))
        # the logits as sampled: ρ = 1, so the clipped objective's gradient is the policy gradient of (G − b)·log π
        _, dlogits = boss.policy_loss(theta[where], np.asarray(batch["tokens"]), np.asarray(batch["logp"]),
                                      (returns - baseline) * mask, mask, eps=0.2, c_e=0.0)
        grad = np.zeros_like(theta)
        np.add.at(grad, where, np.asarray(dlogits, float))  # the table's gradient: the sum over the batch's states
        theta, m, v = boss.adam_step(theta, grad, m, v, step, lr)
        scores_log.append(float(scores.mean()))
        if reached(scores_log) is not None:  # stop at the goal: the time measured is the time to reach it
            break
    return scores_log, theta


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    folders = (ROOT / "solutions" / "s6-hw00-rl-foundations", ROOT / "homework" / "s6-hw00-rl-foundations")
    default = next(d for d in folders if d.is_dir())  # the student's copy has no solutions/
    p.add_argument("--dir", default=str(default), help="folder with boss.py")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = p.parse_args(argv)
    impl = FolderImplementation(Path(args.dir))
    boss, toy_lm = impl.module("boss"), impl.module("toy_lm")
    print(f"toy_lm: {toy_lm.N_PROMPTS} prompts, V = {toy_lm.V}, MAX_LEN = {toy_lm.MAX_LEN}; "
          f"SFT policy: exact mean score "
          f"{toy_lm.exact_stats(toy_lm.reference_theta(), boss.log_softmax)['score']:.3f}")
    print(f"goal: mean batch score over the last {WINDOW} updates ≥ {GOAL}; batch = 64 answers\n")
    print(f"{'algorithm':<36} {'seed':>4} {'updates':>8} {'answers':>8} {'time, s':>8}   final score, KL/answer")
    rows = {}
    for name, run in [
        ("PPO (train, defaults)", lambda s: boss.train(seed=s, n_updates=100, log_every=0)),
        ("GRPO (train, algo='grpo')", lambda s: boss.train(seed=s, n_updates=150, algo="grpo", log_every=0)),
    ]:
        for seed in args.seeds:
            started = time.perf_counter()
            history = run(seed)
            total = time.perf_counter() - started
            i = reached([h["score"] for h in history])
            per_update = total / len(history)
            if i is None:
                print(f"{name:<36} {seed:>4} {'—':>8} {'—':>8} {'—':>8}   not reached in {len(history)} updates")
                continue
            rows.setdefault(name, []).append((i + 1, history[i]["n_answers"], per_update * (i + 1)))
            print(f"{name:<36} {seed:>4} {i + 1:>8} {history[i]['n_answers']:>8} {per_update * (i + 1):>8.3f}   "
                  f"{np.mean([h['score'] for h in history[-5:]]):.3f}, {history[-1]['kl_ref']:.2f} "
                  f"(after {len(history)})")
    name = "REINFORCE + baseline (1 step/batch)"
    for seed in args.seeds:
        started = time.perf_counter()
        scores, theta = reinforce(boss, toy_lm, seed)
        elapsed = time.perf_counter() - started
        i = reached(scores)
        exact = toy_lm.exact_stats(theta, boss.log_softmax)
        if i is None:
            print(f"{name:<36} {seed:>4} {'—':>8} {'—':>8} {'—':>8}   not reached in {len(scores)} updates")
            continue
        rows.setdefault(name, []).append((i + 1, 64 * (i + 1), elapsed))
        print(f"{name:<36} {seed:>4} {i + 1:>8} {64 * (i + 1):>8} {elapsed:>8.3f}   "
              f"exact {exact['score']:.3f}, {exact['kl_ref']:.2f}")
    print("\nmedian over the seeds that reached the goal:")
    for name, r in rows.items():
        r = np.array(r, dtype=float)
        print(f"  {name:<36} updates {np.median(r[:, 0]):6.0f}   answers {np.median(r[:, 1]):7.0f}   "
              f"time {np.median(r[:, 2]):.3f} s   ({len(r)}/{len(args.seeds)} seeds)")


if __name__ == "__main__":
    main()
