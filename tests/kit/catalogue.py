"""The kit's catalogue of typical mistakes (tests/kit/mutants/<hw>/<part>/*.py), each graded once per run.

A mutant is appended to a copy of its part's solution module (later definitions win). Each selected mutant is
graded on its whole part, as a student runs ``check.py HW PART``; tests/kit/test_mutants.py asserts that it is
rejected, tests/kit/test_feedback.py that the report opens with its diagnosis.
"""
from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader import homeworks
from grader.report import scoreboard
from grader.runner import run_part

MUTANTS = Path(__file__).resolve().parent / "mutants"
CASES = sorted(MUTANTS.glob("*/*/*.py"))
IDS = [f"{p.parent.name}/{p.stem}" for p in CASES]


def mutant_folder(path: Path, tmp_path: Path):
    hw = homeworks.load(path.parent.parent.name)
    part = hw.part(path.parent.name)
    folder = tmp_path / "impl"
    shutil.copytree(hw.solutions_dir, folder, ignore=shutil.ignore_patterns("__pycache__"))
    module = folder / f"{part.module}.py"
    solution, mutant = module.read_text(encoding="utf-8"), path.read_text(encoding="utf-8")
    module.write_text(solution + "\n\n# ---- mutant ----\n" + mutant, encoding="utf-8")
    return hw, part, folder


class Graded:
    """Grades the mutants the session selected, several at a time, each once, as soon as a test asks."""

    def __init__(self, paths: list[Path], tmp_factory):
        self.pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
        self.futures = {path: self.pool.submit(self._grade, path, tmp_factory) for path in dict.fromkeys(paths)}

    @staticmethod
    def _grade(path: Path, tmp_factory):
        hw, part, folder = mutant_folder(path, tmp_factory.mktemp(path.stem))
        result = run_part(hw, part, str(folder))
        return result, scoreboard(hw, [result], "модули", f"python homework/check.py {hw.name}")

    def __getitem__(self, path: Path):
        return self.futures[path].result()

    def close(self) -> None:
        self.pool.shutdown(wait=True)
