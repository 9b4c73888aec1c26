"""Which way a submission's results flow once grading returned them (a benchmark that prints, not a test).

    python benchmarks/results_flow.py [--part dp]

A class of two, copied into a temporary folder: the reference (``solutions/<hw>``) and the untouched stubs
(``homework/<hw>``), one part each (``--part``), graded by ``grader.batch.run`` with every output of a batch: the
CSV, the feedback (``.txt`` and ``.json``) and the class report's records (``--report``). The main thread is traced
with ``sys.setprofile`` from the moment a submission's future hands back its results (``Future.result`` returns to
``grader/batch.py``) to the moment the loop asks for the next one: that is where its outputs are written. The
grading itself (the checking processes and the worker: runner, boundary, plugin) runs in the pool's threads and is
not traced; a frame of those files in the flow would be left out all the same.

Printed per submission: the sequence of the grader's files the results stay in (consecutive frames in one file count
once; a return to the caller's file is a stay too, as #40 counts them), then per file how many stays and how many
entries (a call from another of the grader's files: a return is no entry), and whether the file is entered at most
twice. The class-wide end of the batch (the CSV in name order, the summary table, the class report) follows the
last submission and is not part of one submission's flow.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import batch  # noqa: E402
from grader.base import homeworks  # noqa: E402
from grader.reporting import class_report, export, feedback, lms, similarity  # noqa: E402, F401 - before the trace

HW = "s6-hw00-rl-foundations"
GRADER = ROOT / "grader"
GRADING = ("grader/boundary/", "grader/grading/runner.py", "grader/grading/plugin.py")  # not the flow
BASE = "grader/base/"  # what every layer shares: read by the outputs, folded into the stay of the file that calls it
FUTURES = "concurrent/futures/_base.py"


def _file(frame) -> str | None:
    """The grader file of ``frame`` relative to the repository, or None (not the grader's, or the grading's)."""
    if frame is None:
        return None
    path = Path(frame.f_code.co_filename)
    if GRADER not in path.parents:
        return None
    rel = path.relative_to(ROOT).as_posix()
    return None if rel.startswith(GRADING) else rel


class Flow:
    """The stays of each submission's results in the grader's files, from ``sys.setprofile`` events of the main
    thread. Per submission: the stays ``(file, entered)`` (``entered``: begun by a call, not by a return to the
    caller) and the calls down into the base layer, per file."""

    def __init__(self):
        self.flows: list[tuple[list[tuple[str, bool]], Counter]] = []
        self.current: tuple[list[tuple[str, bool]], Counter] | None = None

    def __call__(self, frame, event, arg):
        if event not in ("call", "return"):
            return
        code = frame.f_code
        if code.co_filename.endswith(FUTURES) and _file(frame.f_back) == "grader/batch.py":
            if event == "return" and code.co_name == "result":  # grading returned this submission's results
                self.current = ([], Counter())
                self.flows.append(self.current)
            elif event == "call" and code.co_name == "as_completed":  # the loop asks for the next one
                self.current = None
            return
        if self.current is None:
            return
        stays, base = self.current
        where = _file(frame if event == "call" else frame.f_back)
        if where is None:
            return
        if where.startswith(BASE):
            if event == "call" and not (_file(frame.f_back) or "").startswith(BASE):
                base[where] += 1
            return
        if not stays or stays[-1][0] != where:
            stays.append((where, event == "call" and bool(stays)))


def _shown(stays: list[str]) -> str:
    """The sequence of stays, a back-and-forth between two files repeated (a → b → a → b …) said once with its
    count."""
    names = [Path(f).stem for f in stays]
    out: list[str] = []
    i = 0
    while i < len(names):
        n = 1
        while i + 2 * n + 1 < len(names) and names[i + 2 * n] == names[i] and names[i + 2 * n + 1] == names[i + 1]:
            n += 1
        if n > 1:
            out.append(f"({names[i]} → {names[i + 1]}) ×{n}")
            i += 2 * n
        else:
            out.append(names[i])
            i += 1
    return " → ".join(out)


def class_of_two(folder: Path) -> None:
    shutil.copytree(ROOT / "solutions" / HW, folder / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "homework" / HW, folder / "stubs", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # the workers' user reads the class


def report(name: str, stays: list[tuple[str, bool]], base: Counter) -> str:
    files = [f for f, _ in stays]
    count = Counter(files)
    entries = Counter(f for f, entered in stays if entered)
    # an output entered from another output (not from batch, not a return): one output calling another
    crossings = Counter(f"{Path(a).stem} → {Path(b).stem}" for (a, _), (b, entered) in zip(stays, stays[1:])
                        if entered and a != "grader/batch.py")
    lines = [f"{name}: {len(stays)} stays in {len(count)} files; {sum(crossings.values())} calls from one output "
             f"into another" + (f" ({', '.join(f'{k} ×{v}' for k, v in crossings.items())})" if crossings else ""),
             "  " + _shown(files), "",
             f"  {'file':<36} {'stays':>5} {'entered':>7}  entered at most twice"]
    lines += [f"  {f:<36} {count[f]:>5} {entries[f]:>7}  {'yes' if entries[f] <= 2 else 'NO'}" for f in count]
    lines.append("  calls down into the base layer (folded into the caller's stay): "
                 + ", ".join(f"{Path(f).stem} {n}" for f, n in base.most_common()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", default="dp", help="the part graded (default: dp)")
    args = p.parse_args(argv)
    hw = homeworks.load(HW)
    with tempfile.TemporaryDirectory(prefix="results-flow-") as tmp:
        tmp_path = Path(tmp)
        tmp_path.chmod(0o755)
        class_of_two(tmp_path / "class")
        out = tmp_path / "out"
        flow = Flow()
        names: list[str] = []
        printed = io.StringIO()
        sys.setprofile(flow)
        try:
            with contextlib.redirect_stdout(printed):
                subs = batch.run(hw, hw.select([args.part]), tmp_path / "class", jobs=1, csv_path=str(out / "s.csv"),
                                 stream=io.StringIO(), feedback_dir=str(out / "feedback"),
                                 allow_default_secret=True, report_dir=str(out / "report"))
        finally:
            sys.setprofile(None)
        written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    names = [s.name for s in subs]  # jobs=1: graded, and so traced, in name order
    print(f"{HW}, part {args.part}: a class of {len(subs)} ({', '.join(names)}); outputs written: {len(written)} "
          f"files ({', '.join(written)})")
    for name, (stays, base) in zip(names, flow.flows):
        print()
        print(report(name, stays, base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
