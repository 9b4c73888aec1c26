"""One process that grades a part's reference and then several mutants of it (started by tests/kit/catalogue.py).

A student's run starts a checking process and a zygote for each grading; the catalogue grades about two hundred
implementations, so this process runs the part's graded checks as one pytest session per implementation, one
after another, with one zygote for all of them. Each implementation's code still runs in confined workers, with
the part's time limits, exactly as ``check.py HW PART`` grades it.

A mutant is graded on the checks whose verdict it can change, and only as far as its feedback's first block needs:
- A check whose calls (as the reference's grading records them) reach no function the mutant changes runs the
  reference's code on the check's own inputs, so it keeps the reference's verdict. Changed: what the mutant
  defines or assigns, and every function naming one of those (``reach``); a check that recorded no call (it reads
  a run a module fixture made earlier) always runs, and so does every check of a mutant with other top-level code.
- The feedback opens with the failed subject first in the module's order (callees first): the checks about later
  functions run only when none up to the first changed one failed (``plan``), or when a guard check's count
  (grader.runner.guarded, applied to the whole part here) still depends on them.
The kit's tests grade a few mutants on every check as well and compare (``"whole": true``): every verdict and
message kept or computed, and the first block of the feedback, must be the same.

Usage: ``python catalogue_run.py JOB.json OUT.json``; JOB holds the homework, the part, the reference's folder and
the mutants (``{"path", "folder", "whole"}``); OUT gets each implementation's check records (grader.results).
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import io
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from grader import homeworks, report  # noqa: E402
from grader.boundary import zygote  # noqa: E402
from grader.results import CheckResult  # noqa: E402
from grader.runner import PYTEST_FLAGS, Reader, check_results, guarded  # noqa: E402


def grade(hw, part, folder: str, select: list[str] | None = None) -> list[dict]:
    """The part's checks (or the ``select``\\ ed ones) on the modules in ``folder``, in a pytest session here."""
    with tempfile.TemporaryDirectory(prefix="hwcat-") as tmp:
        events = Path(tmp) / "events.jsonl"
        events.touch()
        args = [str(hw.tests_dir / part.tests), f"--impl={folder}", f"--results-file={events}",
                f"--homework={hw.name}", *[f"--select={part.tests}::{name}" for name in select or []],
                *PYTEST_FLAGS, "-p", "no:faulthandler", "--capture=sys"]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            os.chdir(tmp)
            try:
                pytest.main(args)
            finally:
                os.chdir(ROOT)
        records = Reader(events).read()
    return [dataclasses.asdict(c) for c in check_results(records, guard=False)]  # guards: on the whole part


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def reach(solution: str, mutant: str) -> set[str] | None:
    """The functions of the module whose behaviour the mutant may change (None: any of them).

    Changed: a function the mutant defines, a module-level name it assigns without calling anything (``NAMED_BY``,
    a constant), and every function that names a changed one, directly or through others. Any other top-level code
    of its own (a call, a class) may change anything.
    """
    base, extra = ast.parse(solution), ast.parse(mutant)
    imports = {ast.dump(n) for n in base.body if isinstance(n, (ast.Import, ast.ImportFrom))}
    changed: set[str] = set()
    for node in extra.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            changed.add(node.name)
        elif isinstance(node, ast.Assign) and not any(isinstance(n, ast.Call) for n in ast.walk(node.value)) \
                and all(isinstance(n, (ast.Name, ast.Tuple)) for t in node.targets for n in ast.walk(t)
                        if not isinstance(n, ast.expr_context)):
            changed |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and ast.dump(node) in imports:
            continue
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):  # a docstring
            return None
    defs = {n.name: _loads(n) for n in base.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    defs.update({n.name: _loads(n) for n in extra.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))})
    grown = True
    while grown:
        more = {f for f, names in defs.items() if names & changed} - changed
        changed |= more
        grown = bool(more)
    return changed


def plan(reference: list[dict], changed: set[str] | None, order: list[str]) -> tuple[list[str], list[str], int] | None:
    """The checks to run, in two stages, and where the feedback can begin (None: every check, at once).

    Only a check that reaches a changed function can fail. The feedback opens with the failed subject that comes
    first in the module's order (callees first, grader.report.function_order), so it can begin no earlier than the
    changed subject first in that order. The first stage runs the reaching checks whose subjects include a function
    up to that one; when one of them fails with a subject up to it, no other check can come before it in the
    feedback, and the second stage (the other reaching checks) is not run.
    """
    if changed is None:
        return None
    rank = {f: i for i, f in enumerate(order)}
    subjects = {f for c in reference for f in c["subjects"]}  # a helper no check is about heads no group
    begin = min((rank[f] for f in changed & subjects if f in rank), default=len(order))
    can_fail = [c for c in reference if not c["functions"] or set(c["functions"]) & changed or c["outcome"] != "passed"]
    early = [c["name"] for c in can_fail if min(rank.get(f, -1) for f in c["subjects"] or [""]) <= begin]
    return early, [c["name"] for c in can_fail if c["name"] not in early], begin


def grade_mutant(hw, part, folder: str, reference: list[dict], staged, rank: dict[str, int]) -> list[dict]:
    """The mutant's check records: those run, and the reference's for the checks that cannot fail."""
    if staged is None:
        return _guarded(grade(hw, part, folder))
    early, late, begin = staged
    run = {c["name"]: c for c in grade(hw, part, folder, early)} if early else {}
    failed = [rank.get(c["subject"], -1) for c in run.values() if c["outcome"] != "passed"]
    if late and not (failed and min(failed) <= begin and _guards_settled(reference, run, set(late))):
        run.update({c["name"]: c for c in grade(hw, part, folder, late)})
    skipped = set(early + late) - set(run)  # could fail, but come after the first failed function: not run
    return _guarded([run.get(c["name"], c) for c in reference if c["name"] not in skipped])


def _guards_settled(reference: list[dict], run: dict[str, dict], late: set[str]) -> bool:
    """Whether every guard check's count is known without the late checks: a behaviour check of its functions
    already passed (run now, or one that cannot fail), or none of them is late."""
    known = [run.get(c["name"], c) for c in reference if c["name"] not in late]
    for g in (c for c in known if c["guard"]):
        partners = [c for c in reference if not c["guard"] and set(c["subjects"]) & set(g["subjects"])]
        passed = any(run.get(c["name"], c)["outcome"] == "passed" for c in partners if c["name"] not in late)
        if not passed and any(c["name"] in late for c in partners):
            return False
    return True


def _guarded(records: list[dict]) -> list[dict]:
    return [dataclasses.asdict(c) for c in guarded([CheckResult(**r) for r in records])]


def main(job_file: str, out_file: str) -> None:
    job = json.loads(Path(job_file).read_text(encoding="utf-8"))
    hw = homeworks.load(job["homework"])
    part = hw.part(job["part"])
    solution = (hw.solutions_dir / f"{part.module}.py").read_text(encoding="utf-8")
    order, _ = report.function_order(hw, part)
    rank = {f: i for i, f in enumerate(order)}
    out = {}
    with zygote.kept():
        reference = _guarded(grade(hw, part, str(hw.solutions_dir)))
        for mutant in job["mutants"]:
            staged = plan(reference, reach(solution, Path(mutant["path"]).read_text(encoding="utf-8")), order)
            out[mutant["path"]] = {"checks": grade_mutant(hw, part, mutant["folder"], reference, staged, rank)}
            if mutant.get("whole") and staged is not None:
                out[mutant["path"]]["whole"] = _guarded(grade(hw, part, mutant["folder"]))
    Path(out_file).write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:3])
