"""The student's copy holds no answer key, and the grade is no lookup of public answers (#26).

Two attacks on a released copy (grader.authoring.release), graded in the instructor's checkout, public and hidden
inputs:

- the paste attack (tests/kit/answer_key_paste.py): every function the copy defines, in place of each function the
  student writes; no round of candidates may score a point in any part;
- the lookup attack (tests/kit/answer_key_lookup.py): a submission that answers exactly the calls the copy's checks
  make on public inputs and raises KeyError on any other scores nothing, while the same submission's self-check
  (``--public``, what the copy can show) scores full marks: the attack did remember every public call.

A part's checks pass these only when every check of the part takes its expected answers from the answer key
(grader.grading.key) and every function of the part has checks on hidden inputs (grader.grading.hidden).
"""
from __future__ import annotations

import json
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

import answer_key_lookup as lookup_attack
import answer_key_paste as paste_attack
from grader.authoring.release import release
from grader.base import homeworks
from grader.base.homeworks import ROOT
from kit import CHECK, HW, check_env, run_check_json, run_measured

pytestmark = pytest.mark.slow  # releases a copy and grades hundreds of submissions

PARTS = [p.id for p in homeworks.load(HW).parts]


def part_scores(results: dict) -> dict[str, tuple[float, float]]:
    """(score, bonus) of each part in a results.json of the grader's command line."""
    scores = {p: [0.0, 0.0] for p in PARTS}
    for test in results["tests"]:
        extra = test["extra_data"]
        scores[extra["part"]][1 if extra["bonus"] else 0] += test["score"]
    return {p: (round(s, 2), round(b, 2)) for p, (s, b) in scores.items()}


def passed_checks(results: dict, part: str) -> list[str]:
    return [t["extra_data"]["check"] for t in results["tests"]
            if t["extra_data"]["part"] == part and t["status"] == "passed"]


# ---- both attacks, started as soon as the session is collected ------------------------------------------------

_STARTED: dict[str, Future] = {}
_POOL: list[ThreadPoolExecutor] = []


def attacks(tmp_path_factory, wanted: set[str]) -> dict[str, Future]:
    """The gradings of the attacks ``wanted`` ("paste", "lookup"), one after the other in a thread, from the moment
    the session is collected (tests/kit/conftest.py): beside the other tests, which leave a core idle most of the
    time (more processes at once than cores would only cost CPU time); their tests run last. Started here for an
    attack the conftest did not start."""
    if not _POOL:
        tmp_path_factory.getbasetemp()  # made here, once: threads making it at once remove each other's (--basetemp)
        _POOL.append(ThreadPoolExecutor(max_workers=1))
    for name in sorted(set(wanted) - set(_STARTED)):  # "lookup" before "paste": the shorter first
        _STARTED[name] = _POOL[0].submit({"paste": _paste, "lookup": _lookup}[name], tmp_path_factory.mktemp(name))
    return _STARTED


# ---- the paste attack ---------------------------------------------------------------------------------------


@dataclass
class Paste:
    copy: paste_attack.Copy
    rounds: list[paste_attack.Round]
    folders: list[Path]
    graded: dict  # tests/kit/answer_key_run.py's output
    cpu: float
    wall: float

    def cost(self) -> str:
        gradings = sum(len(r) for r in self.graded["rounds"])
        checks = sum(v["ran"] for r in self.graded["rounds"] for v in r.values())
        pairs = sum(len(c) for c in self.copy.fits.values())
        return (f"{len(self.copy.candidates)} functions of the copy, {pairs} (stub, candidate) pairs, "
                f"{len(self.rounds)} rounds, {gradings} part gradings, {checks} checks run; "
                f"{self.cpu:.0f} s CPU, {self.wall:.0f} s wall")


def _paste(tmp: Path) -> Paste:
    release(tmp / "copy")
    copy = paste_attack.read_copy(tmp / "copy", HW)
    paste_attack.fit(copy, HW, tmp)
    all_rounds = paste_attack.rounds(copy)
    folders = [tmp / "rounds" / f"{k:03d}" for k in range(len(all_rounds))]
    for one, folder in zip(all_rounds, folders):
        paste_attack.write_round(copy, HW, one, folder, tmp / "pool")
    started = time.perf_counter()
    graded, cpu = paste_attack.grade_rounds(HW, folders, all_rounds, tmp)
    return Paste(copy, all_rounds, folders, graded, cpu, time.perf_counter() - started)


@pytest.fixture(scope="module")
def paste(tmp_path_factory) -> Paste:
    result = attacks(tmp_path_factory, {"paste"})["paste"].result()
    print(f"\npaste attack: {result.cost()}")
    return result


def test_paste_candidates_load_as_in_the_copy(paste):
    """Every file of the copy imports beside a submission, as a worker imports it, and every round's modules load:
    a candidate never scores 0 only because its module could not be imported."""
    assert not paste.copy.broken, f"modules of the copy that do not import beside the submission: {paste.copy.broken}"
    assert paste.graded["reference"] and not any(paste.graded["reference"].values()), paste.graded["reference"]
    loads = {(k, p): v["load"] for k, r in enumerate(paste.graded["rounds"]) for p, v in r.items() if v["load"]}
    assert not loads, f"rounds whose modules did not load: {dict(list(loads.items())[:5])}"
    assert all(paste.copy.fits[s] for s in paste.copy.stubs if s.required <= 1)  # the attack has candidates at all


@pytest.mark.parametrize("part", PARTS)
def test_paste_scores_nothing(paste, part):
    """No function of the copy, put in place of a stub, earns a point of ``part`` (nor a bonus point)."""
    scored = []
    for k, (one, graded) in enumerate(zip(paste.rounds, paste.graded["rounds"])):
        got = graded.get(part)
        if got is None or not (got["passed"] or got["score"] or got["bonus"]):
            continue
        fresh = {s.name: c.where for s, c in one.chosen[part].items() if s.name in one.fresh[part]}
        scored.append(f"round {k} ({paste.folders[k]}): {got['score']:.2f} + bonus {got['bonus']:.2f}, passed "
                      f"{', '.join(got['passed'])}; candidates tried first here: {fresh}")
    assert not scored, (f"the copy's own code scores in {part} ({paste.cost()}):\n" + "\n".join(scored[:15])
                        + (f"\n… and {len(scored) - 15} more rounds" if len(scored) > 15 else ""))


def test_paste_rounds_are_graded_as_the_command_line_grades_them(paste, tmp_path):
    """The rounds' grader (tests/kit/answer_key_run.py) gives round 0, every check of every part, the scores of
    ``check.py HW --dir ROUND``."""
    assert set(paste.graded["rounds"][0]) == set(PARTS)
    _, results = run_check_json(tmp_path, HW, "--dir", str(paste.folders[0]))
    assert part_scores(results) == {p: (round(v["score"], 2), round(v["bonus"], 2))
                                    for p, v in paste.graded["rounds"][0].items()}


# ---- the lookup attack --------------------------------------------------------------------------------------


@dataclass
class Lookup:
    folder: Path
    graded: dict  # results.json of the grade (hidden inputs too)
    public: dict  # results.json of the self-check (--public)
    remembered: int  # calls remembered
    cpu: float  # CPU seconds of the recording and the two gradings


def _lookup(tmp: Path) -> Lookup:
    recorded = tmp / "recorded.json"
    proc, cpu = run_measured([sys.executable, str(Path(lookup_attack.__file__)), HW, str(recorded)], 1200,
                             cwd=str(tmp))
    assert recorded.is_file(), proc.stdout + proc.stderr
    memory = json.loads(recorded.read_text(encoding="utf-8"))["memory"]
    lookup_attack.write_submission(HW, memory, tmp / "submission")
    graded, more = run_measured([*CHECK, HW, "--dir", str(tmp / "submission"), "--json", str(tmp / "grade.json")],
                                600, cwd=str(ROOT), env=check_env())
    public, most = run_measured([*CHECK, HW, "--dir", str(tmp / "submission"), "--public", "--json",
                                 str(tmp / "public.json")], 600, cwd=str(ROOT), env=check_env())
    for proc, out in ((graded, tmp / "grade.json"), (public, tmp / "public.json")):
        assert out.is_file(), f"no results.json; the grader printed:\n{proc.stdout}\n{proc.stderr}"
    return Lookup(tmp / "submission", json.loads((tmp / "grade.json").read_text(encoding="utf-8")),
                  json.loads((tmp / "public.json").read_text(encoding="utf-8")),
                  sum(len(v) for v in memory.values()), cpu + more + most)


@pytest.fixture(scope="module")
def lookup(tmp_path_factory) -> Lookup:
    result = attacks(tmp_path_factory, {"lookup"})["lookup"].result()
    print(f"\nlookup attack: {result.remembered} calls remembered, 1 recording and 2 gradings; {result.cpu:.0f} s CPU")
    return result


def test_lookup_remembers_every_public_answer(lookup):
    """On public inputs (what the copy shows) the remembered answers earn every point: the memory is complete."""
    full = {p.id: (float(p.points), float(p.bonus_points)) for p in homeworks.load(HW).parts}
    got = part_scores(lookup.public)
    assert got == full, {p: [t["extra_data"]["check"] for t in lookup.public["tests"]
                             if t["extra_data"]["part"] == p and t["status"] != "passed"] for p in PARTS}


@pytest.mark.parametrize("part", PARTS)
def test_lookup_scores_nothing(lookup, part):
    """Knowing every public answer of ``part`` earns none of its points in the grade (nor a bonus point)."""
    score, bonus = part_scores(lookup.graded)[part]
    assert (score, bonus) == (0.0, 0.0), (
        f"remembering the public answers scores {score} + bonus {bonus} in {part} (submission {lookup.folder}); "
        f"passed: {', '.join(passed_checks(lookup.graded, part))}")
