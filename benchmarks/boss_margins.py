"""How likely a correct train is to fail the statistical checks of the part `boss` (an analysis, not a test).

    python benchmarks/boss_margins.py [--dir FOLDER] [--seeds 1000 1300] [--what goal frontier grpo]

The checks judge train exactly by auditing one run (test_train_audit); what only a statistic can say is judged on
one run each, on a secret seed in the grade: the learning curve of train's defaults (test_train_reaches_goal), the
final policy of train(beta=0.1) against the optimum π* (test_train_kl_frontier, evaluated exactly by enumerating
every answer with the instructor's key) and GRPO's training (test_train_grpo). This script runs the module of
``--dir`` (the reference by default; the loop-heavy variant: tests/kit/variants/<hw>/loop_heavy, the provided
modules are taken from homework/) on each seed of ``--seeds`` and prints, per statistic, mean ± standard deviation,
the lowest and highest run, the bound of the check and its distance in standard deviations, and how many runs
crossed it. One process, one core; about 0.15 CPU-s a seed for the curve, 0.2 for the frontier, 0.3 for GRPO.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from grader.boundary.loading import FolderImplementation  # noqa: E402

HW = "s6-hw00-rl-foundations"
# (statistic, the check's bound, "low" when a run must stay at or above it, "high" when below)
BOUNDS = {"goal": [("first score", 0.3, "high"), ("mean score of the last 5", 0.9, "low"),
                   ("kl_ref at the end", 6.0, "high"), ("value_loss of the last 5", 0.05, "high")],
          "frontier": [("KL of the final policy", 3.0, "low"), ("KL of the final policy", 4.5, "high"),
                       ("J / J*", 0.9, "low")],
          "grpo": [("mean score of the last 5", 0.85, "low"), ("kl_ref at the end", 6.0, "high")]}


def load_key():
    spec = importlib.util.spec_from_file_location("boss_key", ROOT / "tests" / HW / "key" / "boss.py")
    key = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(key)
    return key


def modules(folder: Path, scratch: Path):
    """boss and toy_lm of ``folder``, the kit's provided modules beside it."""
    impl = scratch / "impl"
    shutil.copytree(ROOT / "homework" / HW, impl, ignore=shutil.ignore_patterns("__pycache__"))
    for path in folder.glob("*.py"):
        shutil.copy(path, impl / path.name)
    loaded = FolderImplementation(impl)
    return loaded.module("boss"), loaded.module("toy_lm")


def one_run(what: str, boss, lm, key, seed: int) -> list[float]:
    if what == "goal":
        history = boss.train(seed=seed, log_every=0)
        scores = [h["score"] for h in history]
        return [scores[0], float(np.mean(scores[-5:])), float(history[-1]["kl_ref"]),
                float(np.mean([h["value_loss"] for h in history[-5:]]))]
    if what == "frontier":
        ref, (tokens, mask), scores = lm.reference_theta(), lm.all_answers(), lm.answer_scores()
        tables: dict = {}
        boss.train(seed=seed, beta=0.1, tables=tables, log_every=0)
        run = key.policy_stats(tables["theta"], ref, tokens, mask, scores, 0.1, lm.BOS)
        optimum = key.kl_frontier(ref, tokens, mask, scores, 0.1, lm.BOS)
        return [run["kl"], run["kl"], run["J"] / optimum["J"]]
    history = boss.train(algo="grpo", n_updates=80, seed=seed, log_every=0)
    return [float(np.mean([h["score"] for h in history[-5:]])), float(history[-1]["kl_ref"])]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default=str(ROOT / "solutions" / HW), help="folder with boss.py")
    p.add_argument("--seeds", type=int, nargs=2, default=[1000, 1100], metavar=("FROM", "TO"))
    p.add_argument("--what", nargs="+", default=list(BOUNDS), choices=list(BOUNDS))
    args = p.parse_args(argv)
    key = load_key()
    with tempfile.TemporaryDirectory() as scratch:
        boss, lm = modules(Path(args.dir), Path(scratch))
        for what in args.what:
            start = time.process_time()
            runs = np.array([one_run(what, boss, lm, key, seed) for seed in range(*args.seeds)])
            cpu = time.process_time() - start
            print(f"{what}: {len(runs)} runs of {args.dir}, seeds {args.seeds[0]}…{args.seeds[1] - 1}, "
                  f"{cpu:.1f} CPU-s")
            for (name, bound, side), x in zip(BOUNDS[what], runs.T):
                crossed = int(np.sum(x < bound if side == "low" else x >= bound))
                sigmas = abs(bound - x.mean()) / x.std() if x.std() > 0 else float("inf")
                print(f"  {name:26s} {x.mean():.4f} ± {x.std():.4f}  [{x.min():.4f}, {x.max():.4f}]  "
                      f"bound {'≥' if side == 'low' else '<'} {bound}: {sigmas:.1f}σ away, crossed by {crossed}")


if __name__ == "__main__":
    main()
