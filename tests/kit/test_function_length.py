"""#40: no function of the grader's is over 50 lines (from its ``def`` to its last line, read from the source with
ast; methods and nested functions too), so that each part of a long one is a function whose name says its job."""
from __future__ import annotations

import ast
from pathlib import Path

from grader.base.homeworks import ROOT

GRADER = ROOT / "grader"
LIMIT = 50


def lengths(path: Path) -> dict[str, int]:
    """Each function's length in lines in the module at ``path``: qualified name (``Class.method``,
    ``outer.inner``) -> lines from its ``def`` to its last one."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    found[name] = child.end_lineno - child.lineno + 1
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def too_long(paths: list[Path], root: Path = ROOT) -> dict[str, int]:
    """``file::function`` (the file from ``root``) -> length of each function of ``paths`` over the limit."""
    return {f"{path.relative_to(root).as_posix()}::{name}": n
            for path in paths for name, n in lengths(path).items() if n > LIMIT}


def test_no_function_of_the_grader_is_over_the_limit():
    over = too_long(sorted(GRADER.rglob("*.py")))
    assert not over, f"functions over {LIMIT} lines: split each into parts whose names say their jobs:\n" + "\n".join(
        f"{k}: {n} lines" for k, n in sorted(over.items()))


def test_the_reader_finds_a_long_function(tmp_path):
    """The check above can fail: a function, a method and a nested function one line over the limit are named with
    their lengths; one at the limit, decorators and a class are not counted."""
    body, deeper = "    x = 1\n", "        x = 1\n"
    source = ("import functools\n\n"
              "def at_limit():\n" + body * (LIMIT - 1) + "\n"
              "@functools.cache\n@functools.wraps(at_limit)\n"
              "def over():\n" + body * LIMIT + "\n"
              "class Box:\n    def method(self):\n" + deeper * LIMIT + "\n"
              "def outer():\n    def inner():\n" + deeper * LIMIT + "    return inner\n")
    probe = tmp_path / "probe.py"
    probe.write_text(source, encoding="utf-8")
    assert lengths(probe)["at_limit"] == LIMIT
    assert too_long([probe], tmp_path) == {"probe.py::over": LIMIT + 1, "probe.py::Box.method": LIMIT + 1,
                                 "probe.py::outer.inner": LIMIT + 1, "probe.py::outer": LIMIT + 3}
