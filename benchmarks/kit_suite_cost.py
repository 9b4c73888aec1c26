"""What the kit's own test suite costs, as a multiple of grading the reference once (a benchmark, not a test).

    python benchmarks/kit_suite_cost.py [--install] [--fast] [--by-file] [-- PYTEST ARGS]

Measured in one run, each in a fresh process, as CPU time (user + system) of the process and everything it waited
for, and wall time:
- the unit: the reference solutions graded in one process, as the notebook's self-check grades them
  (``grader.notebook.check`` on the solutions' functions, every part), three times before the suite and twice
  after it: the median (a virtual machine's CPU second is not the same all day: the same code's figure ranged
  over a third within one run of this benchmark);
- with ``--install``: ``pip install -c constraints.txt -e ".[dev]"`` into a new virtual environment, as CI does on a
  fresh machine
  (pip's cache makes it cheaper than a first download; the figure is a floor);
- the kit suite, ``python -m pytest`` (``--fast``: ``-m "not slow"``, the everyday loop).
It prints each figure and the suite's CPU (install included when measured) as a multiple of the unit's, against the
budget of 28× for the whole suite. ``--by-file`` then runs each test file in a pytest process of its own and prints
the costliest first, in units (a session fixture two files share, the catalogue of mistakes, is paid by each: the
column sums to more than the suite).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 28.0  # the whole suite's CPU on a fresh clone, install included, as a multiple of the unit's

UNIT = """
import contextlib, io, sys
sys.path[:0] = [{root!r}, {solutions!r}]
from grader import homeworks, notebook
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
    from grader import homeworks

    hw = homeworks.load(args.homework)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)
    units: list[float] = []
    reference = UNIT.format(root=str(ROOT), solutions=str(hw.solutions_dir), hw=hw.name)

    def grade_reference(times: int) -> None:
        for _ in range(times):
            cpu, wall, code = measure([sys.executable, "-c", reference], cwd=str(ROOT))
            units.append(cpu)
            print(f"unit: the reference graded in one process: CPU {cpu:.2f} s, wall {wall:.2f} s"
                  + ("" if code == 0 else f" (exit {code}: the reference does not pass!)"), flush=True)

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
    cmd = [sys.executable, "-m", "pytest", "-q", *(["-m", "not slow"] if args.fast else []), *args.pytest_args]
    suite = measure(cmd, cwd=str(ROOT), stdout=subprocess.DEVNULL)
    print(f"kit suite ({' '.join(cmd[2:])}): CPU {suite[0]:.1f} s, wall {suite[1]:.1f} s"
          + ("" if suite[2] == 0 else f" (exit {suite[2]}: it fails!)"))
    grade_reference(2)
    unit = statistics.median(units)
    print(f"unit: median {unit:.2f} s CPU (from {min(units):.2f} to {max(units):.2f})")
    total = suite[0] + install
    ratio = total / unit if unit else float("inf")
    what = "suite and install" if args.install else "suite (install not measured: --install)"
    whole = not (args.fast or args.pytest_args)
    verdict = f"; budget ≤ {BUDGET:g}×: {'ok' if ratio <= BUDGET else 'MISSED'}" if whole else ""
    print(f"{what}: CPU {total:.1f} s = {ratio:.1f}× the unit{verdict}", flush=True)
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
