"""What the kit's own test suite costs, as a multiple of grading the reference once (a benchmark, not a test).

    python benchmarks/kit_suite_cost.py [--install] [--fast] [--by-file] [-- PYTEST ARGS]

Measured in one run, each in a fresh process, as CPU time (user + system) of the process and everything it waited
for, and wall time:
- the unit: the reference solutions graded in one process, as the notebook's self-check grades them
  (``grader.notebook.check`` on the solutions' functions, every part), by the kit as it was at revision
  ``UNIT_REVISION`` (checked out from git into a temporary folder), three times before the suites and twice after
  them: the median (a virtual machine's CPU second is not the same all day: the same code's figure ranged over a
  third within one run of this benchmark). The unit is fixed at that revision because cheaper checks make today's
  grading cheaper while the install and the suite's fixed costs stay (#38);
- with ``--install``: ``pip install -c constraints.txt -e ".[dev]"`` into a new virtual environment, as CI does on a
  fresh machine (pip's cache makes it cheaper than a first download; the figure is a floor);
- the kit suite, ``python -m pytest``, and the everyday loop, ``python -m pytest -m "not slow"`` (``--fast``: only
  the everyday loop).
It prints each figure and each as a multiple of the unit's, against its budget: the whole suite with the install
(when measured) ≤ 60×, the everyday loop ≤ 10×. ``--by-file`` then runs each test file in a pytest process of its
own and prints the costliest first, in units (a session fixture two files share, the catalogue of mistakes, is paid
by each: the column sums to more than the suite).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNIT_REVISION = "2663f81"  # the kit whose grading of the reference is the unit (#38 item 4)
BUDGET = 60.0  # the whole suite's CPU on a fresh clone, install included, as a multiple of the unit's
FAST_BUDGET = 10.0  # the everyday loop's (-m "not slow"), install not included

UNIT = """
import contextlib, io, sys
sys.path[:0] = [{root!r}, {solutions!r}]
from grader import notebook
from grader.base import homeworks
hw = homeworks.load({hw!r})
namespace = {{"HOMEWORK": hw.name}}
for part in hw.parts:
    path = hw.solutions_dir / (part.module + ".py")
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
out = io.StringIO()
with contextlib.redirect_stdout(out):
    notebook.check(None, namespace)
sys.exit(0 if "Все проверки пройдены" in out.getvalue() else 1)
"""


def measure(cmd: list[str], **kwargs) -> tuple[float, float, int]:
    """(CPU s, wall s, exit code) of ``cmd`` and everything it waited for."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    code = subprocess.run(cmd, **kwargs).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, time.perf_counter() - started, code


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--homework", default="s6-hw00-rl-foundations")
    p.add_argument("--install", action="store_true", help="also measure pip install -e .[dev] into a fresh venv")
    p.add_argument("--fast", action="store_true", help='the everyday loop: pytest -m "not slow"')
    p.add_argument("--by-file", action="store_true", help="then each test file alone, the costliest first")
    p.add_argument("pytest_args", nargs="*", help="further arguments for pytest (after --)")
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    from grader.base import extras, homeworks

    for module in ("nbformat", "nbclient", "yaml"):  # the kit's suite runs here: it needs the dev extra
        extras.require(module, "dev", "the kit's own test suite")
    hw = homeworks.load(args.homework)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)
    units: list[float] = []
    unit_kit = Path(tempfile.mkdtemp(prefix="hwkit-unit-"))
    archive = subprocess.run(["git", "archive", UNIT_REVISION], cwd=str(ROOT), capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(unit_kit)], input=archive.stdout, check=True)
    old_solutions = unit_kit / hw.solutions_dir.relative_to(ROOT)
    reference = UNIT.format(root=str(unit_kit), solutions=str(old_solutions), hw=hw.name)

    def grade_reference(times: int) -> None:
        for _ in range(times):
            cpu, wall, code = measure([sys.executable, "-c", reference], cwd=str(unit_kit))
            units.append(cpu)
            print(f"unit: the reference graded in one process by the kit at {UNIT_REVISION}: CPU {cpu:.2f} s, "
                  f"wall {wall:.2f} s" + ("" if code == 0 else f" (exit {code}: the reference does not pass!)"),
                  flush=True)

    grade_reference(3)
    install = 0.0
    if args.install:
        with tempfile.TemporaryDirectory(prefix="hwkit-venv-") as venv:
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
            python = str(Path(venv) / "bin" / "python")
            install, wall, code = measure([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                           "-c", "constraints.txt", "-e", ".[dev]"], cwd=str(ROOT))
        print(f"install into a fresh venv: CPU {install:.1f} s, wall {wall:.1f} s"
              + ("" if code == 0 else f" (exit {code})"), flush=True)
    pytest = [sys.executable, "-m", "pytest", "-q"]
    runs = {"fast": [*pytest, "-m", "not slow", *args.pytest_args]}
    if not args.fast:
        runs["whole"] = [*pytest, *args.pytest_args]
    suites = {}
    for kind, cmd in runs.items():
        suites[kind] = measure(cmd, cwd=str(ROOT), stdout=subprocess.DEVNULL)
        cpu, wall, code = suites[kind]
        print(f"kit suite ({' '.join(cmd[2:])}): CPU {cpu:.1f} s, wall {wall:.1f} s"
              + ("" if code == 0 else f" (exit {code}: it fails!)"), flush=True)
    grade_reference(2)
    shutil.rmtree(unit_kit, ignore_errors=True)
    unit = statistics.median(units)
    print(f"unit: median {unit:.2f} s CPU (from {min(units):.2f} to {max(units):.2f})")
    budgets = {"fast": ('everyday loop (-m "not slow")', 0.0, FAST_BUDGET),
               "whole": ("suite and install" if args.install else "suite (install not measured: --install)",
                         install, BUDGET)}
    for kind, (cpu, _, _) in suites.items():
        what, extra, budget = budgets[kind]
        ratio = (cpu + extra) / unit if unit else float("inf")
        verdict = "" if args.pytest_args or (kind == "whole" and not args.install) else \
            f"; budget ≤ {budget:g}×: {'ok' if ratio <= budget else 'MISSED'}"
        print(f"{what}: CPU {cpu + extra:.1f} s = {ratio:.1f}× the unit{verdict}", flush=True)
    cmd = runs.get("whole", runs["fast"])
    if args.by_file:
        rows = []
        for path in sorted((ROOT / "tests" / "kit").glob("test_*.py")):
            cpu, wall, code = measure([*cmd, str(path.relative_to(ROOT))], cwd=str(ROOT), stdout=subprocess.DEVNULL)
            rows.append((cpu, wall, code, path.name))
        for cpu, wall, code, name in sorted(rows, reverse=True):
            print(f"{cpu:7.1f} s CPU {cpu / unit:6.1f}× {wall:6.1f} s wall  {name}"
                  + ("" if code in (0, 5) else f" (exit {code})"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
