"""Every typical mistake the kit knows (tests/kit/mutants/<hw>/<part>/*.py) is rejected by a graded check of its
part, graded as a student runs it, on the checks it can reach (tests/kit/catalogue_run.py); graded on every check,
a mutant of each part reads the same."""
from __future__ import annotations

import ast

import pytest

from catalogue import CASES, IDS, MUTANTS
from grader.base import homeworks
from grader.base.results import CheckResult, PartResult
from grader.reporting import feedback
from kit import HW


def test_there_are_mutants_for_every_part():
    for name in homeworks.available():
        hw = homeworks.load(name)
        for part in hw.parts:
            n = len(list((MUTANTS / name / part.id).glob("*.py")))
            assert n >= 5, f"{name}/{part.id}: only {n} typical mistakes"


@pytest.mark.slow
@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_mutant_is_rejected(path, graded_catalogue):
    assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), "say the mistake in the docstring"
    result, _ = graded_catalogue[path]
    assert not result.error, result.error
    assert result.checks, "no check ran"
    caught = [c for c in result.checks if not c.passed and c.kind in ("check", "error", "timeout")]
    assert caught, f"the mistake passes every check it was run against: {[c.name for c in result.checks]}"


# a mutant of each part whose grading keeps the reference's verdicts (checks it cannot reach) and leaves out checks
# (those that come after its first failed function) or takes the reference's answers (calls of functions it does not
# change): graded on every check, every call made for real, it must read the same
COMPARED = [MUTANTS / HW / part / f"{name}.py" for part, name in [
    ("dp", "validation_sums_only"), ("mc_td", "returns_forward"), ("control", "argmax_first_tie"),
    ("control", "q_learning_no_alpha"), ("policy_gradient", "softmax_axis0"), ("ppo", "td_next_shifted_back"),
    ("boss", "adam_eps_inside_sqrt")]]


@pytest.mark.slow
@pytest.mark.parametrize("whole_path", COMPARED, ids=[f"{p.parent.name}/{p.stem}" for p in COMPARED])
def test_a_mutant_graded_on_the_checks_it_reaches_reads_as_graded_on_every_check(whole_path, graded_catalogue):
    compared = graded_catalogue.compared(whole_path)
    assert compared is not None, "this mutant is graded on every check anyway: nothing to compare"
    staged, whole, remembered = compared
    assert len(staged) < len(whole) or remembered, \
        "no check was left out and no answer remembered: choose a mutant whose first failure comes early"
    fields = ("outcome", "kind", "message", "subject")
    by_name = {c["name"]: {k: c[k] for k in fields} for c in whole}
    assert [(c["name"], {k: c[k] for k in fields}) for c in staged] == [(c["name"], by_name[c["name"]])
                                                                         for c in staged]
    hw = homeworks.load(HW)
    part = hw.part(whole_path.parent.name)
    first = [feedback.failure_blocks(feedback.scoreboard(hw, [PartResult(part, [CheckResult(**c) for c in checks])],
                                                     "модули", "rerun"))[:1] for checks in (staged, whole)]
    assert first[0] == first[1] != []
