"""Benchmark of the part `boss` (bonus «Сколько стоит KL»): PPO's reward–KL trade-off against its exact optimum.

    python benchmarks/boss_frontier.py                       # the reference solutions (the student's copy: homework/)
    python benchmarks/boss_frontier.py --dir homework/s6-hw00-rl-foundations
    python benchmarks/boss_frontier.py --lr 0.02 --updates 120 --c-e 0   # the optimizer's part in the gap

For each β it prints the optimum of J(π) = E_π[r] − β·KL(π ‖ π_ref), π* ∝ π_ref·exp(r/β) over every answer of
each prompt (score, KL per answer, J*; every prompt weighs the same), and the module's own PPO: train(beta=β, ...,
tables=...) on each seed, its final policy evaluated exactly by enumerating every answer (score, KL, J = score −
β·KL), mean ± standard deviation over the seeds, and J / J*. Everything is computed by the module's own functions:
the optimum by its kl_optimal_policy, the log-probabilities of the answers by its log_softmax (toy_lm.answer_logp),
so pointed at a student's folder it shows that student's frontier (and shares its mistakes). One process, one core.
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

BETAS = (0.02, 0.1, 0.2, 0.3, 1.0)


def optimum(boss, toy_lm, ref_logp, scores, beta):
    """(score, KL, J*) of π* at β: the module's kl_optimal_policy on each prompt, averaged over the prompts."""
    per_prompt = [boss.kl_optimal_policy(ref_logp[p], scores[p], beta)[1:] for p in range(toy_lm.N_PROMPTS)]
    score, kl = (float(np.mean(x)) for x in zip(*per_prompt))
    return score, kl, score - beta * kl


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    folders = (ROOT / "solutions" / "s6-hw00-rl-foundations", ROOT / "homework" / "s6-hw00-rl-foundations")
    default = next(d for d in folders if d.is_dir())  # the student's copy has no solutions/
    p.add_argument("--dir", default=str(default), help="folder with boss.py")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--betas", type=float, nargs="+", default=list(BETAS))
    p.add_argument("--lr", type=float, default=None, help="train's lr (default: train's own, 0.05)")
    p.add_argument("--updates", type=int, default=40, help="train's n_updates")
    p.add_argument("--c-e", type=float, default=None, help="train's entropy weight c_e (default: train's own, 0.01)")
    args = p.parse_args(argv)
    impl = FolderImplementation(Path(args.dir))
    boss, toy_lm = impl.module("boss"), impl.module("toy_lm")
    settings = {"n_updates": args.updates, **({"lr": args.lr} if args.lr is not None else {}),
                **({"c_e": args.c_e} if args.c_e is not None else {})}
    ref_logp = toy_lm.answer_logp(toy_lm.reference_theta(), boss.log_softmax)
    scores = toy_lm.answer_scores()
    sft = toy_lm.exact_stats(toy_lm.reference_theta(), boss.log_softmax)
    print(f"{args.dir}: SFT model: score {sft['score']:.3f}, KL 0; "
          f"PPO: train({', '.join(f'{k}={v}' for k, v in settings.items())}, beta=β), seeds {args.seeds}, "
          "final policy evaluated exactly\n")
    print(f"| β | optimum: score / KL / J* | PPO: score / KL / J (mean ± sd over {len(args.seeds)} seeds) | J / J* | "
          "time per run, s |")
    print("|---|---|---|---|---|")
    for beta in args.betas:
        score_opt, kl_opt, j_opt = optimum(boss, toy_lm, ref_logp, scores, beta)
        runs, started = [], time.perf_counter()
        for seed in args.seeds:
            tables = {}
            boss.train(seed=seed, beta=beta, log_every=0, tables=tables, **settings)
            stats = toy_lm.exact_stats(tables["theta"], boss.log_softmax)
            runs.append((stats["score"], stats["kl_ref"], stats["score"] - beta * stats["kl_ref"]))
        per_run = (time.perf_counter() - started) / len(args.seeds)
        r = np.array(runs)
        mean, sd = r.mean(axis=0), r.std(axis=0)
        print(f"| {beta:g} | {score_opt:.3f} / {kl_opt:.2f} / {j_opt:.3f} | {mean[0]:.3f} ± {sd[0]:.3f} / "
              f"{mean[1]:.2f} ± {sd[1]:.2f} / {mean[2]:.3f} ± {sd[2]:.3f} | {mean[2] / j_opt:.2f} | {per_run:.2f} |")


if __name__ == "__main__":
    main()
