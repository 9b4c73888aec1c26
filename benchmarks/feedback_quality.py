"""How the feedback reads when a student makes one typical mistake (a benchmark, not a test: it prints figures).

    python benchmarks/feedback_quality.py [HW] [--part PART ...] [--mutant NAME ...] [--jobs 2] [--each] [--show]

Every mutant of the kit's catalogue (``tests/kit/mutants/<hw>/<part>/<name>.py``: one typical wrong
implementation, appended to a copy of the reference module as ``tests/kit/catalogue.py`` does) is graded
on its whole part, all checks (as a student runs ``check.py HW PART``), and the
feedback is rendered as the student reads it (``grader.reporting.feedback.scoreboard``). Per part it prints:

- **blocks**: the number of failure blocks the student reads for the one mistake, median and max. A failure
  block is what ``grader.reporting.feedback.failure_blocks`` finds in the rendered text: a paragraph opened by a line
  starting with «✗» below the «Итого» line (a check's full explanation, a "not implemented"/"hung" line, a
  part that could not be graded). One-line entries («· title — rerun command») are not blocks.
- **named first**: the share of mistakes named in the *first* block: it contains one of the texts the mutant file
  lists as ``NAMED_BY = ["text", ...]`` (the words of the diagnosis or hint that is about this very mistake; ``[]``
  when none names it). A file without ``NAMED_BY`` counts as named when the first block's check named any typical
  mistake (its diagnosis: the field ``CheckResult.diagnosis`` the check set, as the scoreboard logs it with the text it
  prints, ``grader.reporting.feedback.scoreboard(shown=...)``; never a line found in the text), an upper bound.
- **right function first**: the share whose first group of failures (the first in the report's order) is about a
  function the mutant breaks (``BREAKS = "function"`` or a tuple of them in the mutant file: the public function
  whose answer the mistake makes wrong): the feedback opens on the function that has the mistake.
- **misnamed**: mutants whose first block names a typical mistake (a diagnosis) that is not theirs: the diagnosis
  carries no text of the mutant's ``NAMED_BY`` (for a file without ``NAMED_BY`` this cannot be told).
- **diagnosis first**: the share whose first block's check named a typical mistake, whatever it names.
- **specific first**: the share whose first block carries a diagnosis or a «Подсказка:» that is not generic
  (``grader.reporting.feedback.GENERIC_HINTS``): the floor ``tests/kit/test_feedback.py`` keeps for every mutant.
- **escaped**: mutants that no check failed (``tests/kit/test_mutants.py`` fails for them too). The medians and
  shares above are over the mutants that were caught (at least one block).

Targets (issue 12): median ≤ 2 blocks, max ≤ 4, ≥ 90 % named first, in every part. Grading takes minutes
(a child process per mutant, ``--jobs`` at a time; progress goes to stderr); ``--part`` and ``--mutant`` narrow
it. ``--each`` prints one line per mutant, ``--show`` the whole feedback of each mutant as the student reads it.
A mutant that cannot be graded (a syntax error, a part that failed to run) is listed and left out of the figures.
"""
from __future__ import annotations

import argparse
import ast
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.base import homeworks  # noqa: E402
from grader.grading.runner import run_part  # noqa: E402
from grader.reporting import feedback  # noqa: E402

MUTANTS = ROOT / "tests" / "kit" / "mutants"
sys.path.insert(0, str(ROOT / "tests" / "kit"))
try:
    from catalogue import mutant_folder as _kit_mutant_folder  # the kit's own way of applying a mutant
except ImportError:
    _kit_mutant_folder = None
TARGET_MEDIAN, TARGET_MAX, TARGET_NAMED = 2, 4, 0.9


def _declared(path: Path, name: str):
    """A module-level constant of a mutant file (``BREAKS``, ``NAMED_BY``), or None."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == name for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def _breaks(path: Path) -> set[str]:
    """The functions a mutant breaks, as its ``BREAKS`` says (none when it says nothing)."""
    breaks = _declared(path, "BREAKS")
    return {breaks} if isinstance(breaks, str) else set(breaks or ())


def mutant_folder(path: Path, tmp: Path) -> tuple[homeworks.Homework, homeworks.Part, Path]:
    """The reference modules with the mutant appended to its part's module, as the kit's own test builds them."""
    if _kit_mutant_folder is not None:
        return _kit_mutant_folder(path, tmp)
    hw = homeworks.load(path.parent.parent.name)
    part = hw.part(path.parent.name)
    folder = tmp / "impl"
    shutil.copytree(hw.solutions_dir, folder, ignore=shutil.ignore_patterns("__pycache__"))
    module = folder / f"{part.module}.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n\n# ---- mutant ----\n"
                      + path.read_text(encoding="utf-8"), encoding="utf-8")
    return hw, part, folder


@dataclass
class Graded:
    path: Path
    text: str = ""  # the feedback as the student reads it
    blocks: int = 0
    named: bool = False
    diagnosis: bool = False
    specific: bool = False
    right: bool = False  # the first group is about a function the mutant breaks (BREAKS)
    misnamed: bool = False  # the first block names another mistake than the mutant's NAMED_BY
    error: str = ""  # could not be graded

    @property
    def label(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"


def grade(path: Path, timeout: float | None) -> Graded:
    out = Graded(path)
    try:
        with tempfile.TemporaryDirectory(prefix="hwfeedback-") as tmp:
            hw, part, folder = mutant_folder(path, Path(tmp))
            result = run_part(hw, part, str(folder), None, timeout)
            rerun = f"python homework/check.py {hw.name} --dir {folder.name}"
            shown: list[dict] = []  # what the scoreboard printed in full, in order, each with its check's diagnosis
            out.text = feedback.scoreboard(hw, [result], f"модули из {folder.name}", rerun, shown=shown)
        if result.error:
            out.error = "part not graded: " + result.error.splitlines()[0]
            return out
    except Exception as exc:  # noqa: BLE001 - one broken mutant must not stop the measurement
        out.error = f"{type(exc).__name__}: {exc}"
        return out
    blocks = feedback.failure_blocks(out.text)
    out.blocks = len(blocks)
    first = blocks[0] if blocks else ""
    named_by = _declared(path, "NAMED_BY")
    # the first block's diagnosis: the field of the check it prints (the first text the scoreboard logged)
    diagnosis = shown[0].get("diagnosis", "") if blocks and shown else ""
    out.diagnosis = bool(diagnosis)
    out.named = any(t in first for t in named_by) if named_by is not None else out.diagnosis
    out.misnamed = named_by is not None and out.diagnosis and not any(t in diagnosis for t in named_by)
    out.specific = feedback.is_specific(first, diagnosis)
    order = feedback.function_order(hw, part)
    rank = {f: i for i, f in enumerate(order)}
    subjects = [feedback.subject(c, order) for c in result.checks if not c.passed]
    first_group = min(subjects, key=lambda f: (rank.get(f, len(order)), not f)) if subjects else None
    out.right = first_group in _breaks(path)
    return out


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} {100 * k / n:3.0f}%" if n else "—"


def table(graded: list[Graded]) -> list[str]:
    head = (f"{'part':<16} {'mistakes':>8}  {'blocks median':>13} {'max':>4}  {'right function first':>20}  "
            f"{'misnamed':>8}  {'named first':>12}  {'diagnosis first':>15}  {'specific first':>14}  {'escaped':>7}")
    lines = [head, "-" * len(head)]
    parts: dict[str, list[Graded]] = {}
    for g in graded:
        parts.setdefault(g.path.parent.name, []).append(g)
    for name, gs in [*parts.items(), ("all", graded)]:
        ok = [g for g in gs if not g.error]
        caught = [g for g in ok if g.blocks]
        n = len(caught)
        blocks = [g.blocks for g in caught]
        med = f"{statistics.median(blocks):g}" if blocks else "—"
        mx = f"{max(blocks)}" if blocks else "—"
        miss = [] if name == "all" else [
            what for what, bad in (("median", blocks and statistics.median(blocks) > TARGET_MEDIAN),
                                   ("max", blocks and max(blocks) > TARGET_MAX),
                                   ("named", n and sum(g.named for g in caught) < TARGET_NAMED * n)) if bad]
        lines.append(f"{name:<16} {len(gs):>8}  {med:>13} {mx:>4}  {_pct(sum(g.right for g in caught), n):>20}  "
                     f"{sum(g.misnamed for g in caught):>8}  {_pct(sum(g.named for g in caught), n):>12}  "
                     f"{_pct(sum(g.diagnosis for g in caught), n):>15}  "
                     f"{_pct(sum(g.specific for g in caught), n):>14}  "
                     f"{len(ok) - n:>7}" + (f"  misses target: {', '.join(miss)}" if miss else "")
                     + (f"  ({len(gs) - len(ok)} not graded)" if len(ok) < len(gs) else ""))
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("homework", nargs="?", default="s6-hw00-rl-foundations")
    p.add_argument("--part", action="append", default=[], help="only this part (repeatable)")
    p.add_argument("--mutant", action="append", default=[], help="only mutants whose name contains this (repeatable)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=None, help="time limit per check (default: the part's)")
    p.add_argument("--each", action="store_true", help="one line per mutant")
    p.add_argument("--show", action="store_true", help="print each mutant's feedback as the student reads it")
    args = p.parse_args(argv)
    hw = homeworks.load(args.homework)
    part_ids = args.part or [part.id for part in hw.parts]
    for pid in part_ids:
        hw.part(pid)  # an unknown part is an error, not an empty table
    paths = [path for pid in part_ids for path in sorted((MUTANTS / hw.name / pid).glob("*.py"))
             if not args.mutant or any(m in path.stem for m in args.mutant)]
    if not paths:
        print("no mutants selected", file=sys.stderr)
        return 2
    print(f"{hw.name}: grading {len(paths)} mutants of {', '.join(part_ids)} on their whole part, "
          f"{args.jobs} at a time (each in its own child process; this takes minutes)", flush=True)
    started = time.perf_counter()
    done: dict[Path, Graded] = {}
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(grade, path, args.timeout): path for path in paths}
        for future in as_completed(futures):
            g = future.result()
            done[g.path] = g
            elapsed = time.perf_counter() - started
            left = elapsed / len(done) * (len(paths) - len(done))
            print(f"\r[{len(done)}/{len(paths)}] {elapsed:5.0f} s, about {left:4.0f} s left: {g.label:<50}",
                  end="" if sys.stderr.isatty() else "\n", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    graded = [done[path] for path in paths]
    if args.show:
        for g in graded:
            print(f"\n===== {g.label} =====\n{g.error or g.text}")
    if args.each:
        print()
        for g in graded:
            first = (feedback.failure_blocks(g.text) or [""])[0].splitlines()[:1]
            print(f"{g.label:<48} " + (f"NOT GRADED {g.error}" if g.error else
                  f"blocks {g.blocks:>2}  right {'yes' if g.right else 'no ':<3}  "
                  f"misnamed {'yes' if g.misnamed else 'no ':<3}  named {'yes' if g.named else 'no ':<3}  "
                  f"specific {'yes' if g.specific else 'no ':<3}"
                  f"  first: {first[0].strip()[:70] if first else '(nothing failed)'}"))
    print()
    print("\n".join(table(graded)))
    errors = [g for g in graded if g.error]
    for g in errors:
        print(f"not graded: {g.label}: {g.error}")
    print(f"\n{len(graded)} mutants in {time.perf_counter() - started:.0f} s; targets per part: median ≤ "
          f"{TARGET_MEDIAN} blocks, max ≤ {TARGET_MAX}, ≥ {TARGET_NAMED:.0%} named first")
    return 0


if __name__ == "__main__":
    sys.exit(main())
