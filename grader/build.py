"""Generate the student's files from the single source in ``solutions/<hw>/``.

``python -m grader.build [HW ...]`` writes ``homework/<hw>/*.py`` (and the notebook, when the homework
has one); ``--check`` writes nothing and exits 1 when a generated file is out of date.

In a solution module, a region between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` inside a function
becomes ``# TODO: ваш код`` and ``raise NotImplementedError(...)`` at the region's indentation; a region
at the top level (a helper the students do not get) disappears. A module without regions is provided
code (``envs.py``) and is copied as it is.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from grader import homeworks
from grader.homeworks import ROOT

BEGIN = re.compile(r"^(\s*)# BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*# END SOLUTION\s*$")
DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)\s*\(")


class BuildError(Exception):
    pass


def make_stub(source: str, filename: str = "<solution>") -> str:
    """The student's version of a solution module."""
    out: list[str] = []
    defs: list[tuple[int, str]] = []  # (indent, name) of the enclosing functions
    inside: int | None = None
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        if inside is not None:
            if BEGIN.match(line):
                raise BuildError(f"{filename}:{number}: BEGIN SOLUTION inside another region")
            if END.match(line):
                inside = None
            continue
        m = BEGIN.match(line)
        if m:
            indent = m.group(1)
            inside = number
            if indent:
                owner = next((name for ind, name in reversed(defs) if ind < len(indent)), None)
                if owner is None:
                    raise BuildError(f"{filename}:{number}: an indented region outside a function")
                out.append(f"{indent}# TODO: ваш код\n")
                out.append(f'{indent}raise NotImplementedError("TODO: {owner}")\n')
            else:
                while out and not out[-1].strip():  # a removed top-level helper leaves no blank-line gap
                    out.pop()
                out.append("\n")
            continue
        if END.match(line):
            raise BuildError(f"{filename}:{number}: END SOLUTION without BEGIN")
        d = DEF.match(line)
        if d:
            ind = len(d.group(1))
            defs = [(i, n) for i, n in defs if i < ind] + [(ind, d.group(2))]
        out.append(line)
    if inside is not None:
        raise BuildError(f"{filename}:{inside}: BEGIN SOLUTION without END")
    text = "".join(out)
    return re.sub(r"\n{4,}", "\n\n\n", text)


def generated_files(hw_name: str) -> dict[Path, str]:
    """Every file the build writes for a homework, with its content."""
    hw = homeworks.load(hw_name)
    files: dict[Path, str] = {}
    for path in sorted(hw.solutions_dir.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        files[hw.homework_dir / path.name] = make_stub(source, str(path.relative_to(ROOT)))
    notebook = _notebook_builder(hw_name)
    if notebook is not None:
        files.update(notebook(hw))
    return files


def _notebook_builder(hw_name: str):
    try:
        from grader import notebook_build
    except ImportError:
        return None
    return notebook_build.generated_files


def stale(hw_name: str) -> list[Path]:
    """Generated files that differ from what the build would write now."""
    return [path for path, text in generated_files(hw_name).items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.build", description=__doc__.splitlines()[0])
    p.add_argument("homeworks", nargs="*", help="default: all")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when something is out of date")
    args = p.parse_args(argv)
    names = args.homeworks or homeworks.available()
    out_of_date = []
    n_files = 0
    for name in names:
        for path, text in generated_files(name).items():
            n_files += 1
            current = path.read_text(encoding="utf-8") if path.is_file() else None
            if current == text:
                continue
            out_of_date.append(path)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(text.encode("utf-8"))  # "\n" line ends on every platform
    for path in out_of_date:
        print(("out of date: " if args.check else "wrote ") + str(path.relative_to(ROOT)))
    if args.check and not out_of_date:
        print(f"up to date: the {n_files} generated files of {', '.join(names)} match solutions/ and the task "
              "statement")
    return 1 if args.check and out_of_date else 0


if __name__ == "__main__":
    sys.exit(main())
