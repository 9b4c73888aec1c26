"""Where the homeworks are and what their parts are.

A homework is a folder ``tests/<hw>/`` with a ``parts.toml``; adding a homework means adding
folders (``solutions/<hw>``, ``homework/<hw>``, ``tests/<hw>``), never editing the grader.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


class UsageError(Exception):
    """A wrong homework or part name, a missing path: the grader exits 2 with this message."""


@dataclass(frozen=True)
class Part:
    id: str
    title: str
    module: str
    tests: str
    points: float
    timeout: float = 10.0
    bonus_points: float = 0.0
    cost: float = 1.0  # how long the part takes to grade, relative to the others: for scheduling only
    timeout_hints: tuple[tuple[str, str], ...] = ()  # (function, what to look at when it runs past the limit)
    # the CPU seconds all the part's calls together may use, hidden checks included (python -m grader.grading.budget
    # records it with the figure it comes from: the CPU the loop-heavy variant spent on the part in the grade)
    cpu: float | None = None
    variant_cpu: float | None = None

    def budget(self, limit: float | None = None) -> float:
        """The part's CPU budget: the recorded one (without one, :func:`cpu_budget` of the limit alone); with
        another per-check ``limit`` than the part's (``--timeout``), :func:`cpu_budget` of that limit and the
        recorded figure."""
        if limit is None or limit == self.timeout:
            return float(self.cpu) if self.cpu is not None else cpu_budget(self.timeout)
        return cpu_budget(limit, self.variant_cpu)


BUDGET_LIMITS = 2  # a part's CPU budget is at least this many per-check limits ...
BUDGET_VARIANT = 3  # ... and this many times what a slow but correct solution (the loop-heavy variant) spends on it


def cpu_budget(timeout: float, variant_cpu: float | None = None) -> float:
    """max(2 × the per-check limit, 3 × the CPU the loop-heavy variant spends on the part in the grade), rounded up
    to a whole second: a slow but correct solution never meets it, and a submission that burns CPU just under the
    per-check limit in every call meets it after a few calls."""
    return float(math.ceil(round(max(BUDGET_LIMITS * timeout, BUDGET_VARIANT * (variant_cpu or 0.0)), 6)))


@dataclass(frozen=True)
class Homework:
    name: str
    title: str
    parts: tuple[Part, ...] = field(default_factory=tuple)

    @property
    def tests_dir(self) -> Path:
        return ROOT / "tests" / self.name

    @property
    def shared_dir(self) -> Path:
        """The modules both the checks and a worker import (the test environments' classes, which cross the pipe):
        the only part of the homework's tests a worker sees."""
        return self.tests_dir / "shared"

    @property
    def homework_dir(self) -> Path:
        return ROOT / "homework" / self.name

    @property
    def solutions_dir(self) -> Path:
        return ROOT / "solutions" / self.name

    @property
    def modules(self) -> list[str]:
        return [p.module for p in self.parts]

    def part(self, part_id: str) -> Part:
        ids = [p.id for p in self.parts]
        if part_id not in ids:
            what = f"нет части «{part_id}»" if part_id else f"перед :: нужна часть (например {ids[0]}::test_имя)"
            raise UsageError(f"в домашней работе {self.name} {what}. {closest(part_id, ids)}Есть: {', '.join(ids)}")
        return next(p for p in self.parts if p.id == part_id)

    def select(self, names: list[str]) -> list[tuple[Part, list[str] | None]]:
        """Part names or ``part::test`` selections (the command line's, ``check("…")``'s), grouped by part in the
        homework's order: (part, None) for a whole part, (part, [test names]) for some of its checks."""
        chosen: dict[str, list[str] | None] = {}
        for name in names:
            part_id, _, test = name.partition("::")
            self.part(part_id)
            if not test:
                chosen[part_id] = None
            elif chosen.get(part_id, []) is not None:
                chosen.setdefault(part_id, []).append(test)
        if not chosen:
            return [(p, None) for p in self.parts]
        return [(p, chosen[p.id]) for p in self.parts if p.id in chosen]


def closest(name: str, choices: list[str]) -> str:
    """«Может быть, X?» for the choices that look like ``name``, or nothing."""
    close = difflib.get_close_matches(name, choices, n=3, cutoff=0.5)
    return f"Может быть, {' или '.join(close)}? " if close else ""


def available() -> list[str]:
    tests = ROOT / "tests"
    return sorted(p.parent.name for p in tests.glob("*/parts.toml"))


def load(name: str) -> Homework:
    path = ROOT / "tests" / name / "parts.toml"
    if not path.is_file():
        names = available()
        raise UsageError(f"домашней работы «{name}» нет. Есть: {', '.join(names) if names else '(ни одной)'}")
    with path.open("rb") as f:
        data = tomllib.load(f)
    parts = tuple(Part(**{**p, "timeout_hints": tuple(sorted(p.get("timeout_hints", {}).items()))})
                  for p in data.get("part", []))
    return Homework(name=name, title=data.get("title", name), parts=parts)
