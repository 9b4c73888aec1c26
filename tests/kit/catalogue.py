"""The kit's catalogue of typical mistakes (tests/kit/mutants/<hw>/<part>/*.py), each graded once per run.

A mutant is appended to a copy of its part's solution module (later definitions win). Each selected mutant is
graded on its part as a student runs ``check.py HW PART``: confined workers, the part's time limits, the same
scoreboard. The mutants of a part are graded by one process (tests/kit/catalogue_run.py: one pytest session per
mutant, on the checks the mutant can reach, the others with the reference's verdicts), the parts two at a time;
tests/kit/test_mutants.py asserts that each mutant is rejected, tests/kit/test_feedback.py that the report opens
with its diagnosis.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.base import homeworks
from grader.base.results import CheckResult, PartResult
from grader.boundary import confine
from grader.grading.runner import checking_environment
from grader.reporting.feedback import scoreboard

MUTANTS = Path(__file__).resolve().parent / "mutants"
CASES = sorted(MUTANTS.glob("*/*/*.py"))
IDS = [f"{p.parent.name}/{p.stem}" for p in CASES]
RUN = Path(__file__).resolve().parent / "catalogue_run.py"


def mutant_folder(path: Path, tmp_path: Path):
    hw = homeworks.load(path.parent.parent.name)
    part = hw.part(path.parent.name)
    folder = tmp_path / "impl"
    shutil.copytree(hw.solutions_dir, folder, ignore=shutil.ignore_patterns("__pycache__"))
    module = folder / f"{part.module}.py"
    solution, mutant = module.read_text(encoding="utf-8"), path.read_text(encoding="utf-8")
    module.write_text(solution + "\n\n# ---- mutant ----\n" + mutant, encoding="utf-8")
    return hw, part, folder


def inputs_of(path: Path) -> str:
    """The inputs a mistake is graded on: "public" (what the student's copy shows), or "hidden" for a mistake that
    only a check run in the grade catches (its file says ``CAUGHT_BY = "grade"``, tests/kit/mutants/README.md)."""
    return "hidden" if 'CAUGHT_BY = "grade"' in path.read_text(encoding="utf-8") else "public"


class Graded:
    """Grades the mutants the session selected, each once, as soon as the session starts: ``graded[path]`` is
    (the part's result, the scoreboard); for a path of ``whole``, ``graded.compared(path)`` also grades it on
    every check of its part; for a path of ``every``, ``graded.every(path)`` is its result graded for the record
    (public and the default secret's hidden inputs) on every check whose verdict it can change, past the first
    block too."""

    def __init__(self, paths: list[Path], tmp_factory, whole: list[Path] = (), every: list[Path] = ()):
        parts: dict[tuple[str, str, str, bool], list[Path]] = {}
        for path in dict.fromkeys(paths):
            parts.setdefault((path.parent.parent.name, path.parent.name, inputs_of(path), False), []).append(path)
        for path in dict.fromkeys(every):
            parts.setdefault((path.parent.parent.name, path.parent.name, "hidden", True), []).append(path)
        cpus = os.cpu_count() or 2
        cost = {key: len(ps) * homeworks.load(key[0]).part(key[1]).cost for key, ps in parts.items()}
        share = sum(cost.values()) / (2 * cpus) or 1.0  # the work of one process: about half a CPU's
        chunks = []
        for key, ps in sorted(parts.items(), key=lambda item: -cost[item[0]]):
            n = max(1, min(len(ps), math.floor(cost[key] / share + 0.5)))
            chunks += [(key, ps[i::n]) for i in range(n)]
        tmp_factory.getbasetemp()  # made here, once: threads making it at once remove each other's (--basetemp)
        self.pool = ThreadPoolExecutor(max_workers=cpus)
        self.futures, self.whole, self.everywhere = {}, {}, {}
        for key, ps in chunks:
            future = self.pool.submit(self._grade, key, ps, set(whole), tmp_factory)
            (self.everywhere if key[3] else self.futures).update({path: future for path in ps})

    def _grade(self, key: tuple[str, str, str, bool], paths: list[Path], whole: set[Path], tmp_factory) -> dict:
        hw, part = homeworks.load(key[0]), homeworks.load(key[0]).part(key[1])
        tmp = tmp_factory.mktemp(f"catalogue-{key[1]}-{key[2]}{'-every' if key[3] else ''}")
        mutants = [{"path": str(p), "folder": str(mutant_folder(p, tmp / p.stem)[2]),
                    "whole": p in whole and not key[3]} for p in paths]
        job, out = tmp / "job.json", tmp / "out.json"
        job.write_text(json.dumps({"homework": hw.name, "part": part.id, "mutants": mutants, "every": key[3]}),
                       encoding="utf-8")
        token = uuid.uuid4().hex
        proc = subprocess.run([sys.executable, str(RUN), str(job), str(out)], capture_output=True, text=True,
                              env=checking_environment(token, key[2]), cwd=str(tmp), timeout=3600)
        confine.reap(token)
        if not out.is_file():
            raise RuntimeError(f"grading the catalogue of {part.id} failed:\n{proc.stdout}\n{proc.stderr}")
        graded = {}
        for path, entry in json.loads(out.read_text(encoding="utf-8")).items():
            result = PartResult(part, [CheckResult(**c) for c in entry["checks"]])
            graded[Path(path)] = result, scoreboard(hw, [result], "модули", f"python homework/check.py {hw.name}")
            if "whole" in entry:
                self.whole[Path(path)] = entry["checks"], entry["whole"], entry["remembered"]
        return graded

    def __getitem__(self, path: Path):
        return self.futures[path].result()[path]

    def every(self, path: Path):
        """(the part's result, the scoreboard) of ``path`` graded for the record on every check it can change."""
        return self.everywhere[path].result()[path]

    def compared(self, path: Path):
        """(the check records of ``path``'s grading, those of the same mutant graded on every check, how many of its
        calls got the reference's answer), for a path of ``whole``; None when it was graded on every check anyway."""
        self.futures[path].result()
        return self.whole.get(path)

    def close(self) -> None:
        self.pool.shutdown(wait=True)
