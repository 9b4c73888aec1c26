"""How fast the grader is, as a student and an instructor meet it (a benchmark, not a test: it prints figures).

    python benchmarks/grading_speed.py [HW] [--repeat 3] [--batch-size 20] [--jobs 2] [--no-batch] [--before REV]

Prints the wall time of: ``python -c "import numpy, pytest"`` (the floor: every graded part runs in its own
child process that pays it); grading the reference solutions, all parts, and its ratio to that floor;
grading each part alone; a batch of ``--batch-size`` copies of the solutions with ``--jobs`` jobs.
Each figure is the median of ``--repeat`` runs, measured as the user meets it (a fresh process). Also: the
cost of the trust boundary per call (a student's function called through the worker's pipe, against the same
function called in this process), and with ``--before REV`` the whole homework graded by the kit as it was
at git revision REV, alternating with this one in the same run, so that both meet the same machine load.
Targets (issue 7): the whole homework < 5 s, any part but the Boss < 1 s, a batch of 20 with 2 jobs < 60 s.
It first says what it will run and, once the whole homework has been timed, about how long the rest takes;
a progress line on stderr follows each run (a few minutes on 2 busy cores).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import homeworks  # noqa: E402

CHECK = [sys.executable, str(ROOT / "homework" / "check.py")]
TARGET_ALL, TARGET_PART, TARGET_BATCH = 5.0, 1.0, 60.0


class Progress:
    """``[run 5/26, 40 s] one part: ppo (2/3)`` on stderr: in place on a terminal, a line per run otherwise."""

    def __init__(self, total: int):
        self.total, self.done, self.started = total, 0, time.perf_counter()

    def show(self, label: str) -> None:
        self.done += 1
        line = f"[run {self.done}/{self.total}, {time.perf_counter() - self.started:.0f} s] {label}"
        if sys.stderr.isatty():
            print(f"\r{line:<78}", end="", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    def clear(self) -> None:
        if sys.stderr.isatty():
            print(f"\r{'':<78}\r", end="", file=sys.stderr, flush=True)


PROGRESS: Progress | None = None


def wall(cmd: list[str], repeat: int, label: str = "") -> tuple[float, int]:
    """Median wall time of ``cmd`` over ``repeat`` runs, and its last exit code."""
    times, code = [], 0
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    for i in range(repeat):
        if PROGRESS is not None:
            PROGRESS.show(f"{label} ({i + 1}/{repeat})" if repeat > 1 else label)
        started = time.perf_counter()
        code = subprocess.run(cmd, cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=env).returncode
        times.append(time.perf_counter() - started)
    if PROGRESS is not None:
        PROGRESS.clear()
    return statistics.median(times), code


def verdict(seconds: float, target: float | None) -> str:
    if target is None:
        return ""
    return f"  target < {target:g} s: {'ok' if seconds < target else 'MISSED'}"


def boundary(hw, calls: int = 2000) -> None:
    """Per-call cost of crossing to the worker and back: td_errors on three numbers, through the proxy and direct."""
    import importlib.util

    from grader.remote import Session

    session = Session(hw, hw.solutions_dir, 60)
    try:
        remote = session.module("ppo")
        sys.path.insert(0, str(hw.solutions_dir))
        spec = importlib.util.spec_from_file_location("bench_ppo", hw.solutions_dir / "ppo.py")
        local = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(local)
        args = ([1.0, 0.0, 2.0], [2.0, 1.5, 1.0], 0.0, 0.9)
        timing = {}
        for label, func in (("through the worker", remote.td_errors), ("in this process", local.td_errors)):
            func(*args)
            started = time.perf_counter()
            for _ in range(calls):
                func(*args)
            timing[label] = (time.perf_counter() - started) / calls * 1e6
        started = time.perf_counter()
        remote.td_errors.repeat(calls, *args)
        batched = (time.perf_counter() - started) / calls * 1e6
        print(f"{'one call of td_errors (3 numbers)':<44} {timing['through the worker']:7.0f} µs through the worker, "
              f"{timing['in this process']:.0f} µs in-process; {batched:.0f} µs each in a batch of {calls} "
              f"(confinement: {session.level.split(':')[0]})")
    finally:
        session.close()


def compare(hw, rev: str, repeat: int) -> None:
    """The whole homework graded by the kit at ``rev`` and by this one, alternately, ``repeat`` times each."""
    with tempfile.TemporaryDirectory(prefix="hwbench-before-") as tmp:
        before = Path(tmp) / "kit"
        subprocess.run(["git", "worktree", "add", "--detach", str(before), rev], cwd=str(ROOT), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            then, now = [], []
            for _ in range(repeat):
                then.append(wall([sys.executable, str(before / "homework" / "check.py"), hw.name, "--solutions"], 1)[0])
                now.append(wall([*CHECK, hw.name, "--solutions"], 1)[0])
            print(f"{f'solutions, all parts: kit at {rev} / now':<44} {statistics.median(then):7.2f} s / "
                  f"{statistics.median(now):.2f} s (alternating, median of {repeat})")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before)], cwd=str(ROOT),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("homework", nargs="?", default="s6-hw00-rl-foundations")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--no-batch", action="store_true")
    p.add_argument("--before", metavar="REV", help="also grade with the kit at this git revision, alternating")
    args = p.parse_args(argv)
    hw = homeworks.load(args.homework)

    global PROGRESS
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{hw.name}: {len(hw.parts)} parts; {os.cpu_count()} CPUs, load average {load:.2f}; "
          f"Python {sys.version.split()[0]}; median of {args.repeat} runs")
    runs = args.repeat * (2 + len(hw.parts)) + (0 if args.no_batch else 1)
    print(f"Will time: the floor (import numpy, pytest); grading the solutions, all parts; each of the "
          f"{len(hw.parts)} parts alone" + ("" if args.no_batch else
                                            f"; a batch of {args.batch_size} copies with --jobs {args.jobs}")
          + f" — {runs} runs, each in a fresh process (progress on stderr).", flush=True)
    PROGRESS = Progress(runs)
    floor, _ = wall([sys.executable, "-c", "import numpy, pytest"], args.repeat, "the floor")
    label = 'python -c "import numpy, pytest"'
    print(f"{label:<44} {floor:7.2f} s   (the floor, paid once per part)", flush=True)

    whole, code = wall([*CHECK, hw.name, "--solutions"], args.repeat, "solutions, all parts")
    print(f"{'solutions, all parts':<44} {whole:7.2f} s   = {whole / floor:5.1f} × floor"
          f"{'' if code == 0 else f'  (exit {code}: not 100%!)'}{verdict(whole, TARGET_ALL)}", flush=True)
    # parts alone run one after the other (the whole runs 2 at a time); a batch work grades like the whole
    rest = 2 * whole * args.repeat + (0 if args.no_batch else 2 * whole * args.batch_size / max(args.jobs, 1))
    print(f"  (the rest should take about {rest / 60:.1f} min at this speed)", flush=True)
    for part in hw.parts:
        seconds, code = wall([*CHECK, hw.name, part.id, "--solutions"], args.repeat, f"one part: {part.id}")
        target = None if part.id == "boss" else TARGET_PART
        print(f"{'  one part: ' + part.id:<44} {seconds:7.2f} s   = {seconds / floor:5.1f} × floor"
              f"{'' if code == 0 else f'  (exit {code})'}{verdict(seconds, target)}", flush=True)

    boundary(hw)
    if args.before:
        compare(hw, args.before, args.repeat)

    if not args.no_batch:
        with tempfile.TemporaryDirectory(prefix="hwbench-") as tmp:
            folder = Path(tmp) / "submissions"
            for i in range(args.batch_size):
                shutil.copytree(hw.solutions_dir, folder / f"student{i:02d}",
                                ignore=shutil.ignore_patterns("__pycache__"))
            csv_path = Path(tmp) / "scores.csv"
            seconds, code = wall([*CHECK, hw.name, "--batch", str(folder), "--jobs", str(args.jobs),
                                  "--csv", str(csv_path)], 1, f"batch of {args.batch_size}")
            rows = csv_path.read_text(encoding="utf-8").splitlines()[1:] if csv_path.is_file() else []
            print(f"{f'batch of {args.batch_size} copies of the solutions, --jobs {args.jobs}':<44} {seconds:7.2f} s"
                  f"   = {seconds / max(args.batch_size, 1):.2f} s per submission, {len(rows)} CSV rows"
                  f"{'' if code == 0 else f'  (exit {code})'}{verdict(seconds, TARGET_BATCH)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
