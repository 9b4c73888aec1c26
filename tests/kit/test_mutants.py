"""Every typical mistake the kit knows (tests/kit/mutants/<hw>/<part>/*.py) is rejected by a graded check."""
from __future__ import annotations

import ast
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader import homeworks
from grader.runner import run_part

MUTANTS = Path(__file__).resolve().parent / "mutants"
CASES = sorted(MUTANTS.glob("*/*/*.py"))


def _caught_by(path: Path) -> list[str] | None:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "CAUGHT_BY" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


def _mutant_folder(path: Path, tmp_path: Path):
    hw = homeworks.load(path.parent.parent.name)
    part = hw.part(path.parent.name)
    folder = tmp_path / "impl"
    shutil.copytree(hw.solutions_dir, folder, ignore=shutil.ignore_patterns("__pycache__"))
    module = folder / f"{part.module}.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n\n# ---- mutant ----\n" + path.read_text(encoding="utf-8"),
                      encoding="utf-8")
    return hw, part, folder


def test_there_are_mutants_for_every_part():
    for name in homeworks.available():
        hw = homeworks.load(name)
        for part in hw.parts:
            n = len(list((MUTANTS / name / part.id).glob("*.py")))
            assert n >= 5, f"{name}/{part.id}: only {n} typical mistakes"


@pytest.fixture(scope="module")
def graded_mutants(request, tmp_path_factory):
    """Grades every selected mutant two at a time (one child process each), as soon as the first test asks."""
    selected = [item.callspec.params["path"] for item in request.session.items
                if item.originalname == "test_mutant_is_rejected" and hasattr(item, "callspec")]

    def grade(path):
        hw, part, folder = _mutant_folder(path, tmp_path_factory.mktemp(path.stem))
        return run_part(hw, part, str(folder), selection=_caught_by(path))

    pool = ThreadPoolExecutor(max_workers=2)
    futures = {path: pool.submit(grade, path) for path in selected}
    yield futures
    pool.shutdown(wait=True)


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_mutant_is_rejected(path, graded_mutants):
    assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), "say the mistake in the docstring"
    result = graded_mutants[path].result()
    assert not result.error, result.error
    assert result.checks, "no check ran"
    caught = [c for c in result.checks if not c.passed and c.kind in ("check", "error", "timeout")]
    assert caught, f"the mistake passes every check it was run against: {[c.name for c in result.checks]}"
