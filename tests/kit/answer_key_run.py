"""One process that grades the rounds of the paste attack (started by tests/kit/answer_key_paste.py).

``check.py HW PARTS --dir FOLDER`` starts a checking process and a zygote for each grading (about 2 s of CPU even
when every check fails at once); the paste attack grades a couple of hundred rounds, so this process runs each
round's checks as one pytest session, one after another, with one zygote for all of them (as
tests/kit/catalogue_run.py grades the catalogue of mistakes). Nothing else differs from the command line: the
submission's code runs in confined workers with the part's time limits, on public and hidden inputs (the
environment says ``hidden``: grader.grading.runner.checking_environment), and the verdicts go through the same
grader.grading.runner.check_results (a public check counts only with its hidden twins: gated; guards: guarded).

A round grades, of each part with a candidate not tried before, the checks that reach such a stub: those about it
or calling it (as the reference's grading records the calls), and every check about a function one of those is
about (the hidden checks that gate them, the behaviour checks that count their guards). A check reaching no new
candidate would repeat a verdict an earlier round gave. It grades them in two stages: first the hidden checks and
the public checks no hidden check gates; only when one of those passes, all of them (a gated check counts only
with a passed hidden one, so when none passed, the gated checks' verdicts cannot count: grader.grading.runner.gated).

Usage: ``python answer_key_run.py JOB.json OUT.json``; JOB: ``{"homework", "rounds": [{"folder", "fresh":
{part: [stubs]}}]}``; OUT: ``{"reference": {part: failed checks}, "rounds": [{part: {"ran", "second", "passed",
"score", "bonus", "load"}}]}`` (``second``: the part's whole selection ran).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from grader.base import homeworks  # noqa: E402
from grader.base.results import PartResult  # noqa: E402
from grader.boundary import zygote  # noqa: E402
from grader.grading.runner import PYTEST_FLAGS, Reader, check_results  # noqa: E402


def session(hw, parts: list, folder: str, select: list[str] | None = None) -> list[dict]:
    """The events of one pytest session of the parts' checks (``select``: FILE::NAME) on the modules in ``folder``."""
    with tempfile.TemporaryDirectory(prefix="hwkey-") as tmp:
        events = Path(tmp) / "events.jsonl"
        events.touch()
        args = [*(str(hw.tests_dir / p.tests) for p in parts), f"--impl={folder}", f"--results-file={events}",
                f"--homework={hw.name}", *[f"--select={s}" for s in select or []], *PYTEST_FLAGS,
                "-p", "no:faulthandler", "--capture=sys"]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            os.chdir(tmp)
            try:
                pytest.main(args)
            finally:
                os.chdir(ROOT)
        return Reader(events).read()


def results(parts: list, records: list[dict]) -> dict[str, PartResult]:
    by_file = {p.tests: PartResult(p) for p in parts}
    for check in check_results(records):
        by_file[_file({"nodeid": check.nodeid})].checks.append(check)
    return {r.part.id: r for r in by_file.values()}


def reaches(records: list[dict]) -> dict[str, dict]:
    """Every check, hidden twins too (nodeid): the functions it is about, those it is about or calls, whether it
    runs on hidden inputs, and whether its verdict waits for hidden ones (it has hidden twins)."""
    collected = next(r for r in records if r.get("event") == "collected")
    called = {r["nodeid"]: set(r.get("functions") or []) for r in records if r.get("event") == "result"}
    twinned = {i["nodeid"].split("[")[0] + "[" + i["twin"] + "]" for i in collected["items"] if i.get("twin")}
    return {i["nodeid"]: {"about": set(i["subjects"]), "touches": set(i["subjects"]) | called.get(i["nodeid"], set()),
                          "hidden": bool(i.get("hidden")), "twinned": i["nodeid"] in twinned}
            for i in collected["items"]}


def selection(reach: dict, part, fresh: set[str], first: bool) -> list[str]:
    """The checks of ``part`` a round runs when the stubs ``fresh`` have new candidates: those reaching one of them,
    and every check about a function one of those is about (the hidden checks that gate them, the behaviour
    checks that count their guards). ``first``: of those, the hidden checks and the public checks no hidden
    check gates; when none of them passes, no gated check can count (grader.grading.runner.gated), so the rest need not
    run."""
    mine = {n: r for n, r in reach.items() if _file({"nodeid": n}) == part.tests}
    reaching = {n for n, r in mine.items() if r["touches"] & fresh}
    about = set().union(*(mine[n]["about"] for n in reaching)) if reaching else set()
    chosen = reaching | {n for n, r in mine.items() if r["about"] & about}
    if first:
        gated = {f for r in mine.values() if r["hidden"] for f in r["about"]}
        chosen = {n for n in chosen if mine[n]["hidden"] or not (mine[n]["twinned"] or mine[n]["about"] & gated)}
    return [f"{part.tests}::{n.split('::', 1)[1]}" for n in mine if n in chosen]


def grade_round(hw, reach: dict, one: dict) -> dict:
    """One round, in at most two sessions: the first stage of every part, then the whole selection of the parts
    where a check of the first stage passed."""
    parts = [hw.part(p) for p in one["fresh"]]
    first = {p.id: selection(reach, p, set(one["fresh"][p.id]), True) for p in parts}
    staged = [p for p in parts if first[p.id]]
    records = session(hw, staged, one["folder"], [s for p in staged for s in first[p.id]]) if staged else []
    graded = results(parts, records)
    passed = {_file(r) for r in records if r.get("event") == "result" and r.get("outcome") == "passed"}
    again = [p for p in parts if p.tests in passed or not first[p.id]]
    whole = {p.id: selection(reach, p, set(one["fresh"][p.id]), False) for p in again}
    if any(whole.values()):
        more = session(hw, again, one["folder"], [s for p in again for s in whole[p.id]])
        graded.update(results(again, more))
        records += more
    # a module that did not load, from every verdict (the hidden ones too, which check_results leaves out)
    load = {(_file(r), r.get("message", "")) for r in records if r.get("event") == "result" and r.get("kind") == "load"}
    return {p.id: {"ran": len(first[p.id]) + len(whole.get(p.id, [])), "second": p in again,
                   "passed": [c.name for c in graded[p.id].checks if c.passed], "score": graded[p.id].score,
                   "bonus": graded[p.id].bonus_score, "load": sorted(m for f, m in load if f == p.tests)}
            for p in parts}


def _file(record: dict) -> str:
    return str(record.get("nodeid", "")).split("::")[0].rsplit("/", 1)[-1]


def main(job_file: str, out_file: str) -> None:
    job = json.loads(Path(job_file).read_text(encoding="utf-8"))
    hw = homeworks.load(job["homework"])
    out = {"reference": {}, "rounds": []}
    with zygote.kept():
        records = session(hw, hw.parts, str(hw.solutions_dir))
        reach = reaches(records)
        out["reference"] = {p: [c.name for c in r.checks if not c.passed]
                            for p, r in results(hw.parts, records).items()}
        for one in job["rounds"]:
            out["rounds"].append(grade_round(hw, reach, one))
    Path(out_file).write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:3])
