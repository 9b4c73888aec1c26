"""Where the homeworks are and what their parts are.

A homework is a folder ``tests/<hw>/`` with a ``parts.toml``; adding a homework means adding
folders (``solutions/<hw>``, ``homework/<hw>``, ``tests/<hw>``), never editing the grader.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


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


@dataclass(frozen=True)
class Homework:
    name: str
    title: str
    parts: tuple[Part, ...] = field(default_factory=tuple)

    @property
    def tests_dir(self) -> Path:
        return ROOT / "tests" / self.name

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
        for p in self.parts:
            if p.id == part_id:
                return p
        raise UsageError(f"в домашней работе {self.name} нет части «{part_id}». "
                         f"Есть: {', '.join(p.id for p in self.parts)}")

    def select(self, part_ids: list[str] | None) -> list[Part]:
        if not part_ids:
            return list(self.parts)
        return [self.part(pid) for pid in part_ids]


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
