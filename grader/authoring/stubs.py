"""Solution regions: the student's stub and the solved text of a solution module (both builders use them).

In a solution module, a region between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` inside a function
becomes ``# TODO: ваш код`` and ``raise NotImplementedError(...)`` at the region's indentation; a region
at the top level (a helper the students do not get) disappears. A module without regions is provided
code (an environment, the notebook's plots) and stays as it is.
"""
from __future__ import annotations

import re

BEGIN = re.compile(r"^(\s*)# BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*# END SOLUTION\s*$")
DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)\s*\(")


class BuildError(Exception):
    """A solution module or task statement the builders cannot turn into the student's files."""


def make_stub(source: str, filename: str = "<solution>") -> str:
    """The student's version of a solution module."""
    out: list[str] = []
    defs: list[tuple[int, str]] = []  # (indent, name) of the enclosing functions
    inside: int | None = None  # the line number of the open region's BEGIN
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        where = f"{filename}:{number}"
        if inside is not None:
            if BEGIN.match(line):
                raise BuildError(f"{where}: BEGIN SOLUTION inside another region")
            if END.match(line):
                inside = None
            continue
        begin = BEGIN.match(line)
        if begin:
            inside = number
            out += _region_replacement(begin.group(1), defs, out, where)
            continue
        if END.match(line):
            raise BuildError(f"{where}: END SOLUTION without BEGIN")
        function = DEF.match(line)
        if function:
            indent = len(function.group(1))
            defs = [(i, name) for i, name in defs if i < indent] + [(indent, function.group(2))]
        out.append(line)
    if inside is not None:
        raise BuildError(f"{filename}:{inside}: BEGIN SOLUTION without END")
    return re.sub(r"\n{4,}", "\n\n\n", "".join(out))


def _region_replacement(indent: str, defs: list[tuple[int, str]], out: list[str], where: str) -> list[str]:
    """The lines that stand for a region: a TODO in a function; nothing at the top level (the blank lines
    before a removed top-level helper are dropped from ``out`` too, so it leaves no gap)."""
    if not indent:
        while out and not out[-1].strip():
            out.pop()
        return ["\n"]
    owner = next((name for ind, name in reversed(defs) if ind < len(indent)), None)
    if owner is None:
        raise BuildError(f"{where}: an indented region outside a function")
    return [f"{indent}# TODO: ваш код\n", f'{indent}raise NotImplementedError("TODO: {owner}")\n']


def solved_source(source: str) -> str:
    """The solution module with its region markers removed (the code between them stays)."""
    return "".join(line for line in source.splitlines(keepends=True) if not (BEGIN.match(line) or END.match(line)))
