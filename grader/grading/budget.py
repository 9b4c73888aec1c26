"""Record each part's CPU budget: ``python -m grader.grading.budget [HW ...] [--check [--measure]] [--repeat N]``.

A part's calls together, hidden checks included, may use ``cpu`` seconds of the worker's CPU time (as the zygote
reads it from the kernel: grader.boundary.session); past it, the part's remaining checks fail at once with a time
message, so one submission that burns CPU just under the per-check limit in every call cannot hold up a class.
The budget is ``max(2 × the part's per-check limit, 3 × the CPU the loop-heavy variant spends on the part in the
grade)``, rounded up (grader.base.homeworks.cpu_budget), so a slow but correct solution never meets it.

This command grades the loop-heavy variant (``tests/kit/variants/<hw>/loop_heavy/``, a correct solution written
with plain loops) on hidden inputs too, ``--repeat`` times, and writes into ``tests/<hw>/parts.toml``, per part,
``variant_cpu`` (the most it spent, rounded up to 0.1 s) and ``cpu`` (the budget). ``--check`` writes nothing and
exits 1 when a recorded budget is stale: missing, or below the formula for the recorded figure and the part's
current limit (no grading: machine noise cannot make it fail; ``python -m grader.authoring.build --check`` runs it too).
``--check --measure`` also grades the variant and fails when the budget is below 3 × what it spends now by more
than a quarter.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

from grader.base import homeworks
from grader.base.homeworks import BUDGET_VARIANT, ROOT, Homework, cpu_budget

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

MARGIN = 1.25  # --check --measure: a budget below 3 × the variant's CPU now, by more than this factor, is stale
REPEAT = 3


class BudgetError(Exception):
    pass


def variant_dir(hw: Homework) -> Path:
    """The homework's loop-heavy variant: a correct solution that is slow on purpose."""
    return ROOT / "tests" / "kit" / "variants" / hw.name / "loop_heavy"


def parts_file(hw: Homework) -> Path:
    return hw.tests_dir / "parts.toml"


def measure(hw: Homework, repeat: int = REPEAT) -> dict[str, float]:
    """Part id -> the most CPU time the loop-heavy variant's worker spent on the part's calls in ``repeat`` grades
    (hidden inputs included), in seconds."""
    from grader.grading.runner import inputs_for, run_parts

    folder = variant_dir(hw)
    if not folder.is_dir():
        raise BudgetError(f"{hw.name} has no loop-heavy variant ({folder.relative_to(ROOT)}): nothing to measure")
    if inputs_for(hw) != "hidden":
        raise BudgetError(f"{hw.name}: no answer key here (tests/{hw.name}/key/), so no grade on hidden inputs")
    most: dict[str, float] = {}
    for _ in range(repeat):
        for r in run_parts(hw, [(p, None) for p in hw.parts], str(folder)):
            failed = [c.name for c in r.checks if not c.passed]
            if r.error or failed or not r.checks:
                raise BudgetError(f"the loop-heavy variant does not pass part {r.part.id} ({r.error or failed[:3]}): "
                                  "its CPU is no correct solution's")
            most[r.part.id] = max(most.get(r.part.id, 0.0), r.cpu)
    return most


def figure(seconds: float) -> float:
    """A measured CPU time as recorded: rounded up to 0.1 s."""
    return math.ceil(round(seconds * 10, 6)) / 10


def problems(hw: Homework) -> list[str]:
    """Why the recorded budgets are stale (empty: up to date), without grading. A homework without a loop-heavy
    variant records none: its parts get 2 × their limit."""
    if not variant_dir(hw).is_dir():
        return []
    out = []
    for p in hw.parts:
        if p.cpu is None or p.variant_cpu is None:
            out.append(f"part {p.id} has no recorded budget")
        elif p.cpu < cpu_budget(p.timeout, p.variant_cpu):
            out.append(f"part {p.id}: cpu = {p.cpu:g} is below max(2 × {p.timeout:g}, 3 × {p.variant_cpu:g}) "
                       f"= {cpu_budget(p.timeout, p.variant_cpu):g}")
    return out


def stale(hw: Homework) -> list[Path]:
    """``parts.toml`` when its budgets are stale (:func:`problems`), for grader.authoring.build."""
    return [parts_file(hw)] if problems(hw) else []


def drifted(hw: Homework, measured: dict[str, float]) -> list[str]:
    """Parts whose recorded budget is below 3 × the CPU measured now by more than :data:`MARGIN`."""
    return [f"part {p.id}: cpu = {p.cpu} but the variant spends {measured[p.id]:.2f} s now"
            for p in hw.parts if p.id in measured
            and (p.cpu is None or BUDGET_VARIANT * measured[p.id] > MARGIN * p.cpu)]


def rewrite(text: str, values: dict[str, tuple[float, float]]) -> str:
    """``parts.toml``'s text with ``cpu`` and ``variant_cpu`` of each part in ``values`` (id -> (cpu, figure))
    set, after its ``timeout`` line; the rest as written (comments included)."""
    parts = tomllib.loads(text).get("part", [])
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    index, block_id, in_main = -1, None, False
    header = re.compile(r"^\s*\[")
    for line in lines:
        if re.match(r"^\s*\[\[part\]\]", line):
            index += 1
            block_id, in_main = parts[index]["id"], True
        elif header.match(line):
            in_main = False
        if in_main and block_id in values and re.match(r"^\s*(cpu|variant_cpu)\s*=", line):
            continue  # written again below, after the limit
        out.append(line)
        if in_main and block_id in values and re.match(r"^\s*timeout\s*=", line):
            cpu, seconds = values[block_id]
            out.append(f"cpu = {cpu:g}\n")
            out.append(f"variant_cpu = {seconds:g}\n")
    new = "".join(out)
    written = {p["id"]: (p.get("cpu"), p.get("variant_cpu")) for p in tomllib.loads(new).get("part", [])}
    missing = [i for i, v in values.items() if written.get(i) != v]
    if missing:
        raise BudgetError(f"parts.toml: no `timeout = ...` line to write the budget after, in part(s) {missing}")
    return new


def record(hw: Homework, figures: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Write each part's budget from its variant's CPU ``figures`` (id -> seconds) into ``parts.toml``."""
    values = {}
    for p in hw.parts:
        if p.id in figures:
            seconds = figure(figures[p.id])
            values[p.id] = (cpu_budget(p.timeout, seconds), seconds)
    path = parts_file(hw)
    path.write_bytes(rewrite(path.read_text(encoding="utf-8"), values).encode("utf-8"))
    return values


def remake(hw: Homework, repeat: int = REPEAT) -> dict[str, tuple[float, float]]:
    """Bring stale budgets up to date: from the recorded figures where every part has one (a limit changed),
    else measured again."""
    if all(p.variant_cpu is not None for p in hw.parts):
        return record(hw, {p.id: p.variant_cpu for p in hw.parts})
    return record(hw, measure(hw, repeat))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.grading.budget", description=__doc__.splitlines()[0])
    p.add_argument("homeworks", nargs="*", help="default: every homework with a loop-heavy variant")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a recorded budget is stale")
    p.add_argument("--measure", action="store_true", help="with --check: grade the variant and compare, too")
    p.add_argument("--repeat", type=int, default=REPEAT, help="grades of the variant; the most CPU counts")
    args = p.parse_args(argv)
    failed = False
    try:
        names = args.homeworks or [n for n in homeworks.available() if variant_dir(homeworks.load(n)).is_dir()]
        for name in names:
            hw = homeworks.load(name)
            where = parts_file(hw).relative_to(ROOT)
            if args.check:
                found = problems(hw) + (drifted(hw, measure(hw, args.repeat)) if args.measure else [])
                failed |= bool(found)
                print(f"{where}: " + ("; ".join(found) if found else "budgets up to date: " + ", ".join(
                    f"{q.id} {q.budget():g} s" for q in hw.parts)))
                continue
            values = record(hw, measure(hw, args.repeat))
            print(f"wrote {where}: " + ", ".join(f"{i} cpu = {c:g} s (variant {v:g} s)"
                                                 for i, (c, v) in values.items()))
    except (BudgetError, homeworks.UsageError) as exc:
        print(f"budget: {exc}", file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
