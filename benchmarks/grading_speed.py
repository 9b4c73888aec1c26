"""How fast the grader is and what it costs, as ratios to the interpreter's floor (a benchmark, not a test).

    python benchmarks/grading_speed.py [HW] [--quick] [--repeat 3] [--batch-size 20] [--jobs N] [--before REV]

The floor is ``python -c "import numpy, pytest"``: what any Python grader pays once. Measured in one run, each
in a fresh process as the user meets it, wall time and CPU time (of the process and everything it started),
the median of ``--repeat`` runs:
- the floor;
- grading the reference solutions, all parts: wall and CPU against issue 13's targets (≤ 8× the floor's wall,
  ≤ 15× its CPU), and its CPU by process: the command line, the checking processes, and the confined zygotes
  and workers that run the student's code (their CPU alone bounds what any grader of these checks can reach);
- each part alone (target ≤ 2.5× the floor), and one check;
- the solved notebook (``--notebook``);
- the loop-heavy correct variant of tests/kit/variants (a slow but correct student): its time, its slowest
  check and the check nearest its part's time limit;
- a batch of ``--batch-size`` copies of the solutions, graded for the record (hidden inputs too): wall (target
  ≤ 60 s) and CPU per submission (issue 38's goal: ≤ 1.8 CPU-s), warm (the batch's templates); with
  ``--cold-batch`` also cold; ``--batch-only``: nothing else;
- the cost of one call through the worker's pipe;
- with ``--before REV``, the whole homework graded by the kit at git revision REV, alternating with this one,
  so that both meet the same machine load.
``--quick`` (under 30 s): one run each, no batch, no variant. The kit's own bytecode is cached, as on a
student's machine after the first run (a warm-up run writes it). Timings on a shared machine vary by ±20%:
compare figures of one run, not of two runs.
A progress line on stderr follows each run.
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

from grader.base import homeworks  # noqa: E402
from grader.grading.runner import schedule  # noqa: E402

CHECK = [sys.executable, str(ROOT / "homework" / "check.py")]
TARGET_WALL, TARGET_CPU, TARGET_PART, TARGET_BATCH = 8.0, 15.0, 2.5, 60.0  # issue 13: × the floor; s for a batch
TARGET_BATCH_CPU = 1.8  # issue 38: CPU-s per submission of a batch on hidden inputs (1,000 in 15 minutes on 2 cores)
VARIANT = ROOT / "tests" / "kit" / "variants"


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


def _children_cpu() -> float:
    try:
        import resource
    except ImportError:  # Windows: no CPU figure
        return float("nan")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# Each process of the grader that loads it (the command line and the checking processes: the confined zygote and
# workers get a clean environment, without PYTHONPATH) appends its own CPU seconds and role to $HWBENCH_CPU_LOG.
SITECUSTOMIZE = """import atexit, os, sys
def _cpu_log():
    import resource
    u = resource.getrusage(resource.RUSAGE_SELF)
    role = "checking" if "pytest" in " ".join(sys.argv[:1]) else "command line"
    with open(os.environ["HWBENCH_CPU_LOG"], "a") as f:
        f.write(role + "\\t" + repr(u.ru_utime + u.ru_stime) + "\\n")
if os.environ.get("HWBENCH_CPU_LOG"):
    atexit.register(_cpu_log)
"""


def _env(cpu_log: Path | None = None) -> dict[str, str]:
    """The user's environment, with the kit's bytecode cached as on a student's machine (a warm-up run writes it
    into the kit's __pycache__ folders, which git ignores); with ``cpu_log``, each grader process logs its CPU."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cpu_log is not None:
        env["HWBENCH_CPU_LOG"] = str(cpu_log)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(cpu_log.parent), env.get("PYTHONPATH", "")]))
    return env


def measure(cmd: list[str], repeat: int, label: str = "", split: list | None = None,
            env_extra: dict[str, str] | None = None) -> tuple[float, float, int]:
    """Median wall and CPU seconds of ``cmd`` over ``repeat`` runs (CPU: the process and every process it waited
    for, which is all of them: workers end before their grading process), and the last exit code. With ``split``
    (a list), one (command line, checking processes, confined processes) CPU triple per run is appended to it."""
    walls, cpus, code = [], [], 0
    with tempfile.TemporaryDirectory(prefix="hwbench-cpu-") as tmp:
        log = Path(tmp) / "cpu.log" if split is not None else None
        if log is not None:
            (Path(tmp) / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
        for i in range(repeat):
            if PROGRESS is not None:
                PROGRESS.show(f"{label} ({i + 1}/{repeat})" if repeat > 1 else label)
            if log is not None:
                log.write_text("", encoding="utf-8")
            cpu, started = _children_cpu(), time.perf_counter()
            code = subprocess.run(cmd, cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env={**_env(log), **(env_extra or {})}).returncode
            walls.append(time.perf_counter() - started)
            cpus.append(_children_cpu() - cpu)
            if log is not None:
                own = {"command line": 0.0, "checking": 0.0}
                for line in log.read_text(encoding="utf-8").splitlines():
                    role, seconds = line.split("\t")
                    own[role] += float(seconds)
                split.append((own["command line"], own["checking"], cpus[-1] - sum(own.values())))
    if PROGRESS is not None:
        PROGRESS.clear()
    return statistics.median(walls), statistics.median(cpus), code


def zygotes(hw) -> int:
    """The start-ups of confined processes grading the whole homework pays, as many as one check pays: warm
    (grader.grading.warm, Linux) one, the worker template's, which forks every zygote (one check's also forks two);
    cold, a zygote per checking process (one for all the parts without namespaces, as grader.cli schedules them), and
    another for its checks on hidden inputs where the key is here."""
    from grader.boundary import confine
    from grader.grading import warm
    from grader.grading.hidden import hidden_available

    if warm.available():
        return 1
    jobs = (os.cpu_count() or 1) if confine.mode() == "namespaces" else 1
    return len(schedule(hw.select([]), jobs)) * (2 if hidden_available(hw.tests_dir) else 1)


def where_cpu_goes(split: list, one_check: list, processes: int, floor: tuple[float, float]) -> None:
    """The whole homework's CPU by process, and what the student's code alone implies for the targets: the
    confined CPU less ``processes`` start-ups (:func:`zygotes`; each measured as the confined CPU of one check)."""
    cli, checking, confined = (statistics.median(x[i] for x in split) for i in range(3))
    start_up = statistics.median(x[2] for x in one_check)
    print(f"{'  its CPU by process: the command line':<46} {cli:6.2f} s; checking processes (pytest and the checks' "
          f"own computations) {checking:.2f} s; confined zygotes and workers {confined:.2f} s", flush=True)
    work, cores = confined - processes * start_up, os.cpu_count() or 1
    label = f"  the student code's share: confined CPU less {processes} start-up(s) ({start_up:.2f} s each)"
    print(f"{label}: {work:.2f} s = {work / floor[1]:.1f}× the floor's CPU; on {cores} cores at least "
          f"{work / cores:.2f} s = {work / cores / floor[0]:.1f}× the floor's wall", flush=True)


def row(label: str, wall: float, floor: tuple[float, float], cpu: float | None = None,
        wall_target: float | None = None, cpu_target: float | None = None, note: str = "") -> None:
    """One line: seconds, × the floor (wall, and CPU when given), and the targets met or missed."""
    text = f"{label:<46} {wall:6.2f} s = {wall / floor[0]:5.1f}× floor"
    if cpu is not None:
        text += f"; CPU {cpu:5.2f} s = {cpu / floor[1]:5.1f}× floor"
    verdicts = []
    if wall_target is not None:
        verdicts.append(f"wall ≤ {wall_target:g}×: {'ok' if wall / floor[0] <= wall_target else 'MISSED'}")
    if cpu_target is not None:
        verdicts.append(f"CPU ≤ {cpu_target:g}×: {'ok' if cpu / floor[1] <= cpu_target else 'MISSED'}")
    print(text + (f"  [{'; '.join(verdicts)}]" if verdicts else "") + (f"  {note}" if note else ""), flush=True)


def boundary(hw, calls: int = 2000) -> None:
    """Per-call cost of crossing to the worker and back: td_errors on three numbers, through the proxy and direct."""
    import importlib.util

    from grader.boundary.session import Session

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
            measure([sys.executable, str(before / "homework" / "check.py"), hw.name, "ppo", "--solutions"], 1,
                    f"warm-up of the kit at {rev}")
            for _ in range(repeat):
                then.append(measure([sys.executable, str(before / "homework" / "check.py"), hw.name, "--solutions"],
                                    1, f"kit at {rev}")[:2])
                now.append(measure([*CHECK, hw.name, "--solutions"], 1, "this kit")[:2])
            med = [(statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
                   for runs in (then, now)]
            print(f"{f'solutions, all parts: kit at {rev} / now':<46} {med[0][0]:6.2f} s / {med[1][0]:.2f} s wall, "
                  f"CPU {med[0][1]:.2f} s / {med[1][1]:.2f} s (alternating, median of {repeat})")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before)], cwd=str(ROOT),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def slowest_check(hw, folder: Path) -> str:
    """The slowest check of ``folder``'s grading, and the one nearest its part's time limit (pytest's own
    durations, one checking process per part)."""
    found = []  # (seconds, check, limit)
    for part in hw.parts:
        proc = subprocess.run([sys.executable, "-m", "pytest", str(hw.tests_dir / part.tests), "--impl", str(folder),
                               "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--durations=1", "-o", "addopts=",
                               "--durations-min=0"], cwd=str(ROOT), capture_output=True, text=True,
                              env=dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"))
        for line in proc.stdout.splitlines():
            words = line.split()
            if len(words) == 3 and words[0].endswith("s") and words[1] in ("call", "setup"):
                found.append((float(words[0][:-1]), words[2].split("::")[-1], part.timeout))
    if not found:
        return "no check durations"
    slowest, nearest = max(found), max(found, key=lambda f: f[0] / f[2])
    return (f"slowest check {slowest[1]}: {slowest[0]:.2f} s of its {slowest[2]:g} s limit; nearest its limit "
            f"{nearest[1]}: {nearest[0]:.2f} s of {nearest[2]:g} s")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("homework", nargs="?", default="s6-hw00-rl-foundations")
    p.add_argument("--quick", action="store_true", help="one run each, no batch and no variant (under 30 s)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--no-batch", action="store_true")
    p.add_argument("--batch-only", action="store_true", help="only the batch (its figures: wall and CPU)")
    p.add_argument("--cold-batch", action="store_true",
                   help="the batch again with every process started by exec (HWKIT_WARM=off), beside the warm one")
    p.add_argument("--before", metavar="REV", help="also grade with the kit at this git revision, alternating")
    args = p.parse_args(argv)
    hw = homeworks.load(args.homework)
    repeat = 1 if args.quick else args.repeat
    batch = not (args.quick or args.no_batch)
    variant = VARIANT / hw.name / "loop_heavy"
    variant = variant if variant.is_dir() and not args.quick else None

    global PROGRESS
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{hw.name}: {len(hw.parts)} parts; {os.cpu_count()} CPUs, load average {load:.2f}; "
          f"Python {sys.version.split()[0]}; median of {repeat} run(s) each, in fresh processes")
    if args.batch_only:
        PROGRESS = Progress(2 if args.cold_batch else 1)
        with tempfile.TemporaryDirectory(prefix="hwbench-") as tmp:
            batches(hw, Path(tmp), args)
        return 0
    runs = 4 + repeat * (3 + len(hw.parts)) + (1 if variant else 0) + (1 if batch else 0)
    runs += 2 * args.repeat + 1 if args.before else 0
    PROGRESS = Progress(runs)
    measure([*CHECK, hw.name, hw.parts[0].id, "--solutions"], 1, "warm-up (the kit's bytecode)")
    floor = measure([sys.executable, "-c", "import numpy, pytest"], 3, "the floor")
    label = 'python -c "import numpy, pytest" (the floor)'
    print(f"{label:<46} {floor[0]:6.2f} s wall, CPU {floor[1]:.2f} s", flush=True)

    first = hw.parts[0]
    check = next(iter(_check_names(hw, first)), first.id)
    one_check: list = []
    check_wall, check_cpu, _ = measure([*CHECK, hw.name, check, "--solutions"], repeat, "one check", one_check)
    split: list = []
    wall, cpu, code = measure([*CHECK, hw.name, "--solutions"], repeat, "solutions, all parts", split)
    row("solutions, all parts", wall, floor, cpu, TARGET_WALL, TARGET_CPU, "" if code == 0 else f"(exit {code}!)")
    where_cpu_goes(split, one_check, zygotes(hw), floor)
    for part in hw.parts:
        wall, cpu, code = measure([*CHECK, hw.name, part.id, "--solutions"], repeat, f"one part: {part.id}")
        row(f"  one part: {part.id}", wall, floor, cpu, TARGET_PART, note="" if code == 0 else f"(exit {code}!)")
    row(f"  one check: {check}", check_wall, floor, check_cpu)

    with tempfile.TemporaryDirectory(prefix="hwbench-") as tmp:
        from grader.authoring import notebook_build
        from grader.base import extras
        no_notebook = extras.missing(*notebook_build.NEEDS)
        if no_notebook:  # the rest is measured; the solved notebook cannot be built here
            print(f"the solved notebook (--notebook): not measured. {no_notebook}", flush=True)
        else:
            solved = notebook_build.write_solved(hw.name, Path(tmp) / "solved.ipynb")
            wall, cpu, code = measure([*CHECK, hw.name, "--notebook", str(solved)], repeat, "the solved notebook")
            row("the solved notebook (--notebook)", wall, floor, cpu, note="" if code == 0 else f"(exit {code}!)")

        if variant is not None:
            wall, cpu, code = measure([*CHECK, hw.name, "--dir", str(variant)], 1, "the loop-heavy variant")
            row("loop-heavy correct variant, all parts", wall, floor, cpu,
                note=("" if code == 0 else f"(exit {code}!) ") + slowest_check(hw, variant))

        if batch:
            batches(hw, Path(tmp), args)

    boundary(hw)
    if args.before:
        compare(hw, args.before, args.repeat)
    return 0


def batches(hw, tmp: Path, args) -> None:
    """``--batch-size`` copies of the solutions in ``tmp``, graded as a batch warm (and cold: ``--cold-batch``)."""
    folder = tmp / "submissions"
    for i in range(args.batch_size):
        shutil.copytree(hw.solutions_dir, folder / f"student{i:02d}", ignore=shutil.ignore_patterns("__pycache__"))
    for start in ("warm", "cold") if args.cold_batch else ("warm",):
        batch_line(hw, folder, tmp / f"scores-{start}.csv", args, start)


def batch_line(hw, folder: Path, csv_path: Path, args, start: str) -> None:
    """The batch of copies of the solutions, graded for the record (hidden inputs too, on the checkout's secret):
    wall against issue 13's target, CPU per submission (of the command line and every process it started, from
    getrusage of its children) against issue 38's goal. ``start``: "warm" (the batch's templates, grader.grading.warm)
    or "cold" (``HWKIT_WARM=off``: every checking process and zygote by exec)."""
    label = f"batch of {args.batch_size} copies, --jobs {args.jobs}, {start}"
    wall, cpu, code = measure([*CHECK, hw.name, "--batch", str(folder), "--jobs", str(args.jobs), "--csv",
                               str(csv_path), "--allow-default-secret"], 1, label,
                              env_extra={"HWKIT_WARM": "on" if start == "warm" else "off"})
    rows = csv_path.read_text(encoding="utf-8").splitlines()[1:] if csv_path.is_file() else []
    hidden = sum(",hidden," in row for row in rows)
    per = cpu / max(args.batch_size, 1)
    print(f"{label:<46} {wall:6.2f} s = {wall / max(args.batch_size, 1):.2f} s per submission, CPU {cpu:.1f} s = "
          f"{per:.2f} CPU-s per submission ({hidden} of {len(rows)} CSV rows on hidden inputs)"
          f"  [≤ {TARGET_BATCH:g} s: {'ok' if wall <= TARGET_BATCH else 'MISSED'}; "
          f"≤ {TARGET_BATCH_CPU:g} CPU-s per submission: {'ok' if per <= TARGET_BATCH_CPU else 'MISSED'}]"
          f"{'' if code == 0 else f'  (exit {code})'}", flush=True)


def _check_names(hw, part) -> list[str]:
    """``part::check`` names, as ``check.py HW PART --list`` prints them."""
    proc = subprocess.run([*CHECK, hw.name, part.id, "--list"], cwd=str(ROOT), capture_output=True, text=True,
                          encoding="utf-8")
    return [line.split()[0].strip('"') for line in proc.stdout.splitlines() if line.strip().startswith(f'"{part.id}::')]


if __name__ == "__main__":
    sys.exit(main())
