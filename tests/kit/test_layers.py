"""#40: grader/ is layered, lowest first: base ← boundary ← grading ← reporting ← authoring ← the front doors at the
top. A module imports only from its own layer or a lower one: every import is read from the source (ast), those in
functions and under ``if TYPE_CHECKING:`` too. No module name is used twice."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from grader.base.homeworks import ROOT

GRADER = ROOT / "grader"
LAYERS = ["base", "boundary", "grading", "reporting", "authoring"]  # lowest first; the front doors above them all
FRONT = len(LAYERS)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> int:
    """The layer of a dotted module name of the grader's: its sub-package's place, the front doors' above them."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else FRONT


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(GRADER.rglob("*.py"))}


def imported(path: Path, known: set[str]) -> list[tuple[int, str]]:
    """(line, module) of each of the grader's modules that ``path`` imports, wherever the import stands."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "grader"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package up
                here = module_name(path).split(".")[:-1] if path.name != "__init__.py" else module_name(path).split(".")
                base = ".".join(here[:len(here) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "grader":
                continue
            for alias in node.names:  # a name imported from a package may be one of its modules
                whole = f"{base}.{alias.name}"
                found.append((node.lineno, whole if whole in known else base))
    return found


def test_every_module_sits_in_a_layer_and_the_layers_are_the_packages():
    names = modules()
    packages = {m.split(".")[1] for m, p in names.items() if p.name == "__init__.py" and m.count(".") == 1}
    assert packages == set(LAYERS)
    front = sorted(m for m in names if layer(m) == FRONT)
    assert front == ["grader", "grader.batch", "grader.cli", "grader.gradescope", "grader.notebook"]


@pytest.mark.parametrize("module", sorted(modules()))
def test_no_import_climbs_to_a_higher_layer(module):
    names = modules()
    climbing = [f"line {line}: {target} ({LAYERS[layer(target)] if layer(target) < FRONT else 'front door'})"
                for line, target in imported(names[module], set(names))
                if layer(target) > layer(module)]
    where = LAYERS[layer(module)] if layer(module) < FRONT else "front door"
    assert not climbing, f"{module} ({where}) imports from a higher layer:\n" + "\n".join(climbing)


def test_the_reader_finds_a_climbing_import(tmp_path):
    """The check above can fail: an import in a function and one under TYPE_CHECKING are both read."""
    source = tmp_path / "probe.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from grader.reporting import feedback\n"
                      "def f():\n    from grader import batch\n    import grader.grading.runner\n", encoding="utf-8")
    known = set(modules())
    assert sorted(t for _, t in imported(source, known)) == ["grader.batch", "grader.grading.runner",
                                                            "grader.reporting.feedback"]


def test_no_module_name_is_used_twice():
    seen: dict[str, list[str]] = {}
    for path in GRADER.rglob("*.py"):
        if path.name != "__init__.py":
            seen.setdefault(path.stem, []).append(path.relative_to(ROOT).as_posix())
    assert not {k: v for k, v in seen.items() if len(v) > 1}


@pytest.mark.parametrize("package", ["grader", *(f"grader.{name}" for name in LAYERS)])
def test_each_package_says_what_lives_there(package):
    init = GRADER.joinpath(*package.split(".")[1:], "__init__.py")
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    listed = {p.stem for p in init.parent.glob("*.py") if p.name != "__init__.py"}
    if package == "grader":
        listed = {f"grader.{name}" for name in LAYERS} | {"grader.cli", "grader.batch", "grader.gradescope",
                                                          "grader.notebook"}
    missing = sorted(name for name in listed if f":mod:`{name}`" not in doc)
    assert not missing, f"{package}/__init__.py does not say what {missing} are"
