"""Every typical mistake the kit knows (tests/kit/mutants/<hw>/<part>/*.py) is rejected by a graded check of its
part, graded whole as a student runs it."""
from __future__ import annotations

import ast

import pytest

from catalogue import CASES, IDS, MUTANTS
from grader import homeworks


def test_there_are_mutants_for_every_part():
    for name in homeworks.available():
        hw = homeworks.load(name)
        for part in hw.parts:
            n = len(list((MUTANTS / name / part.id).glob("*.py")))
            assert n >= 5, f"{name}/{part.id}: only {n} typical mistakes"


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_mutant_is_rejected(path, graded_catalogue):
    assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), "say the mistake in the docstring"
    result, _ = graded_catalogue[path]
    assert not result.error, result.error
    assert result.checks, "no check ran"
    caught = [c for c in result.checks if not c.passed and c.kind in ("check", "error", "timeout")]
    assert caught, f"the mistake passes every check it was run against: {[c.name for c in result.checks]}"
