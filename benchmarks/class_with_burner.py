"""A class that keeps moving: how long a batch takes when one submission burns CPU in every call, when each row
appears, and how fast Ctrl-C ends it (a benchmark, not a test).

    python benchmarks/class_with_burner.py [--part ppo] [--refs 3] [--jobs 2] [--timeout S] [--burn 0.9]

The class: ``--refs`` copies of the reference's part module and a burner, last by name (so it starts when the first
reference is done), whose every function computes for ``--burn`` × the per-check limit of CPU time and answers
wrong (tests/kit/kit.py ``burner``). Printed: when each CSV row and feedback file appeared (seconds since the
start), the batch's wall and CPU time, the part's CPU budget (parts.toml; grader.grading.budget); then the same class
again, Ctrl-C (SIGINT) sent once the first row is written (and a run goes on): the seconds until the command line
exited, its exit code, and how many processes carrying the run's marker were left. The tests
(tests/kit/test_batch.py) assert the order and the exit, never these seconds.
"""
from __future__ import annotations

import argparse
import csv
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "kit"))

from grader.base import homeworks  # noqa: E402
from grader.boundary import confine  # noqa: E402
from kit import CHECK, HW, burner  # noqa: E402


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _rows(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return [r["submission"] for r in csv.DictReader(text[:text.rfind("\n") + 1].splitlines())]




def batch(folder: Path, out: Path, args, token: str) -> subprocess.Popen:
    shutil.rmtree(out, ignore_errors=True)
    timeout = ["--timeout", str(args.timeout)] if args.timeout else []
    return subprocess.Popen([*CHECK, HW, args.part, "--batch", str(folder), "--jobs", str(args.jobs), *timeout,
                             "--csv", str(out / "scores.csv"), "--feedback", str(out / "feedback"),
                             "--allow-default-secret"], cwd=str(ROOT), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=dict(os.environ, HWKIT_RUN_TOKEN=token))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", default="ppo")
    p.add_argument("--refs", type=int, default=3)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=None, help="the per-check limit (default: the part's)")
    p.add_argument("--burn", type=float, default=0.9, help="the burner's CPU per call, × the limit")
    args = p.parse_args(argv)
    part = homeworks.load(HW).part(args.part)
    limit = args.timeout or part.timeout
    print(f"{HW} {args.part}: limit {limit:g} s per check, budget {part.budget(args.timeout):g} s of CPU for the "
          f"part's calls; {args.refs} reference(s) and a burner ({args.burn * limit:g} s of CPU a call), "
          f"--jobs {args.jobs}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="hwbench-burner-") as tmp:
        folder, out = Path(tmp) / "class", Path(tmp) / "out"
        for i in range(args.refs):
            (folder / f"ref{i}").mkdir(parents=True)
            shutil.copy(ROOT / "solutions" / HW / f"{part.module}.py", folder / f"ref{i}" / f"{part.module}.py")
        (folder / "zz_burner").mkdir()
        (folder / "zz_burner" / f"{part.module}.py").write_text(burner(args.burn * limit, part.module),
                                                                encoding="utf-8")

        cpu, started = _children_cpu(), time.monotonic()
        proc = batch(folder, out, args, uuid.uuid4().hex)
        seen: dict[str, float] = {}
        while True:
            ended = proc.poll() is not None  # a last look after the end: what the last submission wrote
            now = time.monotonic() - started
            for name in _rows(out / "scores.csv"):
                seen.setdefault(f"row {name}", now)
            for path in (out / "feedback").glob("*.txt") if (out / "feedback").is_dir() else []:
                seen.setdefault(f"feedback {path.stem}", now)
            if ended:
                break
            time.sleep(0.02)
        wall, cpu = time.monotonic() - started, _children_cpu() - cpu
        for what, at in sorted(seen.items(), key=lambda item: item[1]):
            print(f"  {at:6.2f} s  {what}")
        print(f"the class: {wall:.2f} s wall, CPU {cpu:.2f} s (exit {proc.returncode}); CSV in the end: "
              f"{', '.join(_rows(out / 'scores.csv'))}", flush=True)

        token = uuid.uuid4().hex
        proc = batch(folder, out, args, token)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline and not (_rows(out / "scores.csv") and
                                                                          confine.marked(token)):
            time.sleep(0.02)  # a row written, and a run going on
        running = len(confine.marked(token))
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        took = time.monotonic() - sent
        left = confine.marked(token)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        print(f"Ctrl-C after the first row ({running} processes of the run): exit {proc.returncode} in {took:.2f} s; "
              f"processes left {len(left)}; rows kept: {', '.join(_rows(out / 'scores.csv')) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
