"""A Gradescope autograder for a homework: ``python -m grader.gradescope OUT.zip [HW [PART ...]]``.

The zip holds, at its root, what Gradescope's autograder specification asks for:

- ``setup.sh``: run once, as root, when Gradescope builds the autograder's image (Ubuntu): installs the kit's
  dependencies (``requirements.txt``, taken from the kit's ``pyproject.toml``) into a virtual environment
  made with the image's own Python 3 (``/autograder/venv``);
- ``run_autograder``: run for every submission: grades ``/autograder/submission`` with the kit and writes
  ``/autograder/results/results.json`` (one test per graded check, with its share of the part's points,
  its visibility and the grader's Russian explanation; the scoreboard in ``output``);
- ``gradescope.json``: what to grade (the homework, its parts, the visibility rules);
- the kit: the grader, the homework's provided modules and stubs, and its graded suites: the files of the
  student's copy (:func:`grader.authoring.release.select_files`: those git tracks, or every file when the kit is not a
  git checkout, without ``solutions/``, the kit's own tests and the instructor's tools) and this module,
  without the notebooks and the benchmarks. Gradescope unpacks it into ``/autograder/source``.

A submission is the student's modules (the parts' ``<module>.py`` files, anywhere in the upload, a whole copy
of the repository included) or one notebook ``.ipynb``. Modules left exactly as the stubs count as not done,
so a repository holding untouched stubs and a filled-in notebook is graded by its notebook. The provided
modules (the homework's other modules) always come from the kit. Grading goes through the kit's command line
(``homework/check.py HW [PART ...] --dir|--notebook ... --json ...``), so every check keeps its time limit and
a submission that hangs or crashes costs its own checks only.

Visibility (Gradescope's ``visible``, ``after_due_date``, ``after_published``, ``hidden``): every test is
``--default-visibility`` (``visible``), except those named by a ``--visibility PART[::CHECK]=LEVEL`` rule
(the last matching rule wins; CHECK is a check's name, its function's name or a pattern such as
``test_*_random``). The scoreboard in ``output`` counts only the tests students can see now. See
docs/gradescope.md.

``python -m grader.gradescope --autograde [--root DIR]`` is what ``run_autograder`` calls; the root
(``/autograder`` on Gradescope) can also be set with the environment variable ``GRADESCOPE_ROOT``.
"""
from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.base import escape, homeworks
from grader.base.homeworks import ROOT, Homework, UsageError
from grader.boundary import confine
from grader.grading import hidden_answers
from grader.grading.hidden import hidden_available, secret_path
from grader.reporting import export

# grader.authoring (release, build, constraints) holds instructor tools that the zip leaves out: only building the zip
# imports them (inside the functions that build it): run_autograder's `python -m grader.gradescope` runs without them

CONFIG = "gradescope.json"
ROOT_ENV = "GRADESCOPE_ROOT"
# besides grader.authoring.release's exclusions (solutions, kit tests, instructor tools, docs, CI, caches)
EXCLUDED = ["notebooks", "benchmarks", ".gitignore", ".gitattributes"]
# in the zip, though not in the student's copy: run_autograder's own code, the answer key (the grade's hidden inputs)
SHIPPED = ["grader/gradescope.py", "tests/*/key"]
_SKIPPED_DIRS = {"__pycache__", ".ipynb_checkpoints", ".git", "__MACOSX", ".pytest_cache", ".venv", "venv",
                 "node_modules", "site-packages"}
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the same kit gives the same zip

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image (Ubuntu): the kit's dependencies
# (requirements.txt, from the kit's pyproject.toml, pinned by constraints.txt) go into a virtual environment made
# with the image's own Python 3; run_autograder grades with that environment.
set -euo pipefail
ROOT="${GRADESCOPE_ROOT:-/autograder}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends python3 python3-venv python3-pip
python3 - <<'EOF'
import sys
need = (@MAJOR@, @MINOR@)
if sys.version_info[:2] < need:
    sys.exit("the kit needs Python >= %d.%d, this image has %s: choose a newer Ubuntu base image"
             % (need + (sys.version.split()[0],)))
EOF
python3 -m venv "$ROOT/venv"
# pinned to the versions the kit's own tests run with (constraints.txt: per Python version)
"$ROOT/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
    -c "$ROOT/source/constraints.txt" -r "$ROOT/source/requirements.txt"
"$ROOT/venv/bin/python" -c "import numpy, pytest; print('numpy', numpy.__version__, '- pytest', pytest.__version__)"
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission (a copy of it sits in /autograder): it grades
# /autograder/submission with the kit in /autograder/source and writes /autograder/results/results.json.
# GRADESCOPE_ROOT stands in for /autograder, GRADESCOPE_PYTHON for the Python that setup.sh installed.
ROOT="${GRADESCOPE_ROOT:-/autograder}"
PY="${GRADESCOPE_PYTHON:-}"
if [ -z "$PY" ]; then
    if [ -x "$ROOT/venv/bin/python" ]; then PY="$ROOT/venv/bin/python"; else PY=python3; fi
fi
export PYTHONDONTWRITEBYTECODE=1 PYTHONIOENCODING=utf-8
mkdir -p "$ROOT/results"
rm -f "$ROOT/results/results.json"
cd "$ROOT/source" && "$PY" -m grader.gradescope --autograde --root "$ROOT"
status=$?
if [ ! -s "$ROOT/results/results.json" ]; then  # the grader could not even start: say so, with 0 points
    said="Автопроверка не запустилась. Сообщите преподавателю."
    printf '{"score": 0, "execution_time": 0, "output": "%s", "visibility": "visible", "tests": []}\n' "$said" \
        > "$ROOT/results/results.json"
    exit 1
fi
exit "$status"
"""


class GradescopeError(Exception):
    """A wrong option or a kit that must not be shipped: the command exits 1 with this message."""


class StaleRecords(GradescopeError):
    """The key's answers on hidden inputs missing or stale: the kit's error, the command exits 2."""


# ---------------------------------------------------------------------------------------------- building

def kit_files(root: Path = ROOT) -> list[str]:
    """The kit's files that go into the autograder (relative POSIX paths, sorted): those git tracks when
    ``root`` is a git checkout (so untracked files never ship), otherwise every file; without the
    exclusions of grader.authoring.release (but with :data:`SHIPPED`) and without :data:`EXCLUDED`."""
    from grader.authoring import release

    patterns = [p for p in release.EXCLUDED if p not in SHIPPED] + EXCLUDED
    return release.select_files(Path(root), patterns)


def _kit_version(root: Path) -> dict:
    """The commit the kit is at and the tracked files changed since (for the instructor's log)."""
    def git(*args: str) -> str:
        try:
            proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return ""
        return proc.stdout.strip() if proc.returncode == 0 else ""
    from grader.authoring import release

    if release.git_files(root) is None:
        return {"commit": None, "changed": []}
    return {"commit": git("rev-parse", "HEAD") or None, "changed": git("diff", "--name-only", "HEAD").splitlines()}


def _setup_sh(requires_python: str) -> str:
    m = re.search(r">=\s*(\d+)\.(\d+)", requires_python)
    major, minor = (m.group(1), m.group(2)) if m else ("3", "0")
    return SETUP_SH.replace("@MAJOR@", major).replace("@MINOR@", minor)


def parse_rule(text: str) -> tuple[str, str]:
    """``PART[::CHECK]=LEVEL`` -> (``PART[::CHECK]``, LEVEL)."""
    spec, sep, level = text.rpartition("=")
    if not sep or not spec:
        raise GradescopeError(f"--visibility {text!r}: expected PART[::CHECK]=LEVEL, e.g. PART::test_*_random="
                              "after_published")
    if level not in export.VISIBILITY:
        raise GradescopeError(f"--visibility {text!r}: the level must be one of {', '.join(export.VISIBILITY)}")
    return spec, level


def check_rule(hw: Homework, parts: list[str], spec: str) -> None:
    """Refuse a rule that names no graded part, or no check of its part (a typo would hide nothing)."""
    part_id, _, check = spec.partition("::")
    try:
        part = hw.part(part_id)
    except UsageError:
        raise GradescopeError(f"--visibility {spec!r}: {hw.name} has no part {part_id!r}; its parts: "
                              + ", ".join(p.id for p in hw.parts)) from None
    if parts and part_id not in parts:
        raise GradescopeError(f"--visibility {spec!r}: the part {part_id!r} is not graded by this autograder "
                              f"(it grades {', '.join(parts)})")
    if check:
        source = (hw.tests_dir / part.tests).read_text(encoding="utf-8")
        names = re.findall(r"^\s*def (test_\w+)\s*\(", source, flags=re.M)
        base = check.split("[")[0]
        if not any(n == base or fnmatch.fnmatchcase(n, base) for n in names):
            raise GradescopeError(f"--visibility {spec!r}: no check of {part.tests} is called {check!r}; "
                                  f"its checks: {', '.join(names)}")


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = [caught] if not isinstance(caught, ast.Tuple) else list(caught.elts)
    return caught is None or any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError",
                                                                       "Exception", "BaseException") for n in names)


def grader_imports(source: str) -> set[str]:
    """The ``grader.*`` modules a file imports when it is imported: its module-level imports (also inside
    ``if``/``with`` blocks, not those under a ``try`` that catches ImportError, not those inside functions)
    and its ``pytest_plugins``."""
    found: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("grader."))
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "grader":
                    found.update(f"grader.{a.name}" for a in node.names)
                elif node.module.startswith("grader."):
                    found.add(node.module)
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytest_plugins"
                                                      for t in node.targets):
                if isinstance(node.value, (ast.List, ast.Tuple)):
                    found.update(e.value for e in node.value.elts if isinstance(e, ast.Constant)
                                 and isinstance(e.value, str) and e.value.startswith("grader."))
            elif isinstance(node, ast.Try):
                if not any(_catches_import_error(h) for h in node.handlers):
                    visit(node.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, (ast.If, ast.With)):
                visit(node.body)
                visit(getattr(node, "orelse", []))

    visit(ast.parse(source).body)
    return found


def missing_imports(contents: dict[str, bytes]) -> list[str]:
    """``file: module`` for each grader module that a shipped Python file imports at import time but that
    would not ship (an instructor tool, a file git does not track)."""
    init = contents.get("grader/__init__.py", b"").decode("utf-8")
    defined = {t.id for node in ast.parse(init).body if isinstance(node, ast.Assign) for t in node.targets
               if isinstance(t, ast.Name)} | {node.name for node in ast.parse(init).body
                                              if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    missing = []
    for rel, data in sorted(contents.items()):
        if rel.endswith(".py"):
            for module in sorted(grader_imports(data.decode("utf-8"))):
                path = module.replace(".", "/")
                if f"{path}.py" not in contents and f"{path}/__init__.py" not in contents and \
                        module.split(".", 1)[1] not in defined:
                    missing.append(f"{rel}: {module}")
    return missing


def _zip_entry(zf: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def _chosen(homework: str | None, parts: list[str] | None) -> tuple[Homework, list[str]]:
    """The homework to grade (the only one when not named) and the graded parts' ids."""
    names = homeworks.available()
    if homework is None:
        if len(names) != 1:
            raise GradescopeError("name the homework: " + (", ".join(names) or "(none found)"))
        homework = names[0]
    try:
        hw = homeworks.load(homework)
        return hw, [hw.part(p).id for p in (parts or [])]
    except UsageError as exc:
        raise GradescopeError(str(exc)) from None


def _kit_contents(hw: Homework) -> dict[str, bytes]:
    """The kit's files for the zip (relative POSIX path: bytes) as the student's copy has them: the README without
    its instructor sections, pytest pointed at the graded suites. Refuses a kit that lacks a file needed to grade,
    imports a grader module that would not ship, or would ship a solution region."""
    from grader.authoring import release  # an instructor tool: in the kit, not in the zip

    files = kit_files(ROOT)
    needed = ["grader/gradescope.py", "homework/check.py", "conftest.py", "pyproject.toml", "constraints.txt",
              f"tests/{hw.name}/parts.toml", *(f"tests/{hw.name}/{p.tests}" for p in hw.parts),
              *(f"homework/{hw.name}/{p.module}.py" for p in hw.parts)]
    missing = [n for n in needed if n not in files]
    if missing:
        raise GradescopeError("files needed to grade would not ship (is git tracking them? `git add` them): "
                              + ", ".join(missing))
    contents = {rel: release.student_content(Path(rel)) for rel in files}
    broken = missing_imports(contents)
    if broken:
        raise GradescopeError("shipped files import grader modules that would not ship: " + "; ".join(broken))
    leaks = release.leaks(contents)
    if leaks:
        raise GradescopeError("solution regions would ship in the autograder: " + ", ".join(leaks))
    return contents


def _secret(hw: Homework, allow_default: bool) -> dict[str, bytes]:
    """The instructor's secret for the zip (git may not track it), or nothing with the kit's default (refused unless
    ``allow_default``)."""
    from grader.grading.secret import is_default, refused

    if not hidden_available(hw.tests_dir):
        raise GradescopeError("no answer key (tests/<hw>/key/) here: this looks like a student's copy")
    if refused(hw, allow_default):
        raise GradescopeError(refused(hw, allow_default))
    if is_default(hw):
        return {}
    return {secret_path(hw.tests_dir).relative_to(ROOT).as_posix(): secret_path(hw.tests_dir).read_bytes()}


def _records(hw: Homework) -> dict[str, bytes]:
    """The key's answers on the hidden inputs of the secret in force (grader.grading.hidden_answers; git may not track
    an instructor's own), which the container reads and never computes; a missing or stale record refuses the zip."""
    refused = hidden_answers.refusal(hw)
    if refused:
        raise StaleRecords(refused)
    folder = hidden_answers.record_dir(hw.tests_dir)
    if not folder.resolve().is_relative_to(ROOT):
        raise GradescopeError(f"the secret in force is outside the kit ({folder.parent}): the zip ships "
                              "tests/<hw>/key/secret and its records")
    return {p.relative_to(ROOT).as_posix(): p.read_bytes() for p in sorted(folder.glob("*.json"))}


def _write_zip(out: Path, own: dict[str, tuple[str, bool]], contents: dict[str, bytes]) -> None:
    """The zip ``out``: the autograder's own files (text, executable), then the kit's; written whole or not at all."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        for name, (text, executable) in own.items():
            _zip_entry(zf, name, text.encode("utf-8"), executable)
        for rel, data in contents.items():
            _zip_entry(zf, rel, data, executable=os.access(ROOT / rel, os.X_OK))
    os.replace(tmp, out)


def build(out: Path, homework: str | None = None, parts: list[str] | None = None,
          rules: list[tuple[str, str]] | None = None, default: str = "visible", force: bool = False,
          allow_default_secret: bool = False, hidden_inputs: str = "after_published",
          allow_unconfined: bool = False) -> list[str]:
    """Write the autograder zip ``out``; return the names it holds. It grades hidden inputs too, from the
    instructor's secret (grader.grading.secret); with the kit's default secret only when ``allow_default_secret``. A
    container that confines the submission's code neither by namespaces nor by a user of its own grades nobody, unless
    ``allow_unconfined``."""
    from grader.authoring import release  # an instructor tool: in the kit, not in the zip
    from grader.authoring.constraints import requirements  # so is the install's pins' module

    hw, parts = _chosen(homework, parts)
    records = _records(hw)  # cheap: refused before anything is built
    if default not in export.VISIBILITY or hidden_inputs not in export.VISIBILITY:
        raise GradescopeError(f"a visibility must be one of {', '.join(export.VISIBILITY)}")
    rules = list(rules or [])
    for spec, _ in rules:
        check_rule(hw, parts, spec)
    out_of_date = [] if force else release.stale_files()
    if out_of_date:
        raise GradescopeError("generated files are out of date; run `python -m grader.authoring.build` first: "
                              + ", ".join(out_of_date))
    contents = _kit_contents(hw)
    contents.update(_secret(hw, allow_default_secret))
    contents.update(records)
    deps, requires_python = requirements(ROOT)
    config = {"homework": hw.name, "parts": parts, "default_visibility": default, "hidden_inputs": hidden_inputs,
              "visibility": [[spec, level] for spec, level in rules], "kit": _kit_version(ROOT),
              "allow_unconfined": bool(allow_unconfined)}
    own = {"setup.sh": (_setup_sh(requires_python), True), "run_autograder": (RUN_AUTOGRADER, True),
           "requirements.txt": ("".join(d + "\n" for d in deps), False),
           CONFIG: (json.dumps(config, ensure_ascii=False, indent=2) + "\n", False)}
    clash = sorted(set(own) & set(contents))
    if clash:
        raise GradescopeError("the kit has files the autograder writes itself: " + ", ".join(clash))
    _write_zip(Path(out).resolve(), own, contents)
    return [*own, *contents]


# ------------------------------------------------------------------------------------------------ grading

@dataclass
class Found:
    """What a submission holds for grading."""
    kind: str  # "modules", "notebook" or "none"
    modules: dict[str, Path] = field(default_factory=dict)  # module name -> file
    helpers: list[Path] = field(default_factory=list)  # the student's other .py files next to the modules
    notebook: Path | None = None
    remarks: list[str] = field(default_factory=list)  # what was taken and what was left out (Russian)


FILE_LIMIT = 4 << 20  # bytes of one file taken from an upload (a module, a notebook)


def _files(folder: Path) -> list[Path]:
    """The upload's regular files, never through a link: a link (to a file, or to a folder elsewhere on the
    autograder's machine) is not part of what the student uploaded."""
    out: list[Path] = []
    if folder.is_symlink() or not folder.is_dir():
        return out
    for top, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith(".")
                         and not os.path.islink(os.path.join(top, d)))
        for name in sorted(names):
            path = Path(top) / name
            if not name.startswith(".") and stat.S_ISREG(os.lstat(path).st_mode):
                out.append(path)
    return sorted(out)


def _read(path: Path) -> bytes:
    """A file of the upload, opened without following a link, at most FILE_LIMIT bytes (else an error)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(f"{path.name}: не обычный файл")
        data = f.read(FILE_LIMIT + 1)
    if len(data) > FILE_LIMIT:
        raise OSError(f"{path.name}: файл больше {FILE_LIMIT >> 20} МБ")
    return data


def _copy(path: Path, target: Path) -> None:
    target.write_bytes(_read(path))


def _preference(hw: Homework, folder: Path):
    def key(path: Path):
        rel = path.relative_to(folder).parts[:-1]
        in_homework = any(rel[i:i + 2] == ("homework", hw.name) for i in range(len(rel)))
        elsewhere = any(d in ("solutions", "tests", "notebooks") for d in rel)
        return (not in_homework, elsewhere, len(rel), path.as_posix())
    return key


def _same_text(a: bytes, b: bytes) -> bool:
    def norm(x: bytes) -> bytes:
        return b"\n".join(line.rstrip() for line in x.replace(b"\r\n", b"\n").strip().split(b"\n"))
    return norm(a) == norm(b)


def find_submission(hw: Homework, folder: Path, graded: list[str]) -> Found:
    """The modules or the notebook to grade in ``folder`` (Gradescope's ``submission/``)."""
    files = _files(folder)
    key = _preference(hw, folder)
    rel = lambda p: escape.name(p.relative_to(folder).as_posix())  # noqa: E731
    part_modules = [p.module for p in hw.parts]
    provided = {p.stem for p in hw.homework_dir.glob("*.py")} - set(part_modules)
    modules: dict[str, Path] = {}
    remarks: list[str] = []
    for module in part_modules:
        candidates = sorted((p for p in files if p.name == f"{module}.py"), key=key)
        if candidates:
            modules[module] = candidates[0]
            if len(candidates) > 1:
                remarks.append(f"{module}.py есть в отправке несколько раз; проверен {rel(candidates[0])}, "
                               f"не проверялись: {', '.join(rel(p) for p in candidates[1:])}")
    done = [m for m, p in modules.items()
            if not _same_text(_read(p), (hw.homework_dir / f"{m}.py").read_bytes())]
    notebooks = sorted((p for p in files if p.suffix == ".ipynb"),
                       key=lambda p: (p.name != f"{hw.name}.ipynb", key(p)))
    if notebooks and not done:
        chosen, others = notebooks[0], notebooks[1:]
        remarks = [f"Проверена тетрадка {rel(chosen)}."]
        if others:
            remarks.append(f"Другие тетрадки не проверялись: {', '.join(rel(p) for p in others)}.")
        if modules:
            remarks.append("Модули в отправке — нетронутые заготовки, поэтому проверена тетрадка.")
        return Found("notebook", notebook=chosen, remarks=remarks)
    if not modules:
        names = ", ".join(f"{m}.py" for m in part_modules)
        return Found("none", remarks=[f"В отправке нет ни модулей домашней работы ({names}), ни тетрадки .ipynb. "
                                      "Загрузите свои модули (или всю папку homework/" + hw.name
                                      + "/) либо тетрадку с решением."])
    folders = {p.parent for p in modules.values()}
    helpers = [p for p in files if p.suffix == ".py" and p.parent in folders and p.stem not in part_modules
               and p.stem not in provided and p.stem != "conftest" and not p.stem.startswith("test_")]
    remarks = _module_remarks(hw, folder, modules, graded, done, notebooks) + remarks
    return Found("modules", modules=modules, helpers=helpers, remarks=remarks)


def _module_remarks(hw: Homework, folder: Path, modules: dict[str, Path], graded: list[str], done: list[str],
                    notebooks: list[Path]) -> list[str]:
    """What the instructor's log says about the modules taken from a submission."""
    def rel(p):
        return escape.name(p.relative_to(folder).as_posix())

    graded_modules = [hw.part(pid).module for pid in graded]
    by_folder: dict[str, list[str]] = {}
    for m in graded_modules:
        if m in modules:
            by_folder.setdefault(rel(modules[m].parent) if modules[m].parent != folder else "", []).append(f"{m}.py")
    taken = "; ".join((f"{where}/: " if where else "") + ", ".join(names) for where, names in by_folder.items())
    missing = [f"{m}.py" for m in graded_modules if m not in modules]
    remarks = [f"Проверены модули из отправки: {taken}." if taken else "Модулей проверяемых частей в отправке нет."]
    if missing:
        remarks.append(f"Не найдены в отправке (их проверки не пройдены): {', '.join(missing)}.")
    if not done:
        remarks.append("Все модули в отправке совпадают с заготовками: решений в них пока нет.")
    if notebooks:
        remarks.append(f"Тетрадка {rel(notebooks[0])} не проверялась: в отправке есть заполненные модули "
                       "(проверяется что-то одно).")
    return remarks


def _stage(hw: Homework, found: Found, scratch: Path) -> tuple[list[str], dict[str, str]]:
    """Copy the submission into ``scratch``; return the grader's options and the scratch paths to hide in
    messages (with what to say instead)."""
    if found.kind == "notebook":
        target = scratch / "notebook" / found.notebook.name
        target.parent.mkdir()
        _copy(found.notebook, target)
        return ["--notebook", str(target)], {str(target): escape.name(found.notebook.name)}
    folder = scratch / "submission"
    folder.mkdir()
    for path in found.helpers:
        _copy(path, folder / path.name)
    part_modules = {p.module for p in hw.parts}
    for path in hw.homework_dir.iterdir():  # the provided modules are the kit's, whatever was uploaded
        if path.is_file() and path.suffix == ".py" and path.stem not in part_modules:
            shutil.copyfile(path, folder / path.name)
    for module, path in found.modules.items():
        _copy(path, folder / f"{module}.py")
    return ["--dir", str(folder)], {str(folder) + os.sep: "", str(folder): "отправке"}


def _replace(value, paths: dict[str, str]):
    if isinstance(value, str):
        for old, new in paths.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_replace(v, paths) for v in value]
    if isinstance(value, dict):
        return {k: _replace(v, paths) for k, v in value.items()}
    return value


def _not_graded(hw: Homework, graded: list[str], message: str) -> dict:
    """results.json for a submission that could not be graded: every graded part fails with ``message``."""
    parts = [hw.part(pid) for pid in graded]
    return {"score": 0.0, "execution_time": 0, "output": "", "output_format": "md", "visibility": "visible",
            "tests": [{"name": f"[{p.id}] часть не проверена", "score": 0.0, "max_score": p.points,
                       "status": "failed", "output": escape.code_block(message), "output_format": "md",
                       "visibility": "visible",
                       "extra_data": {"part": p.id, "check": "", "kind": "error", "bonus": False}} for p in parts],
            "extra_data": {"format": export.RESULTS_FORMAT,
                           "parts": [{"id": p.id, "title": p.title, "points": p.points,
                                      "bonus_points": p.bonus_points} for p in parts], "notes": {},
                           "mistakes": []}}


def load_config(kit: Path = ROOT) -> dict:
    return json.loads((kit / CONFIG).read_text(encoding="utf-8"))


def grade(root: Path, config: dict) -> dict:
    """Grade ``root/submission`` as ``config`` says; return results.json's content."""
    started = time.perf_counter()
    hw = homeworks.load(config["homework"])
    graded = config.get("parts") or [p.id for p in hw.parts]
    try:
        found = find_submission(hw, root / "submission", graded)
    except OSError as exc:  # a file of the upload that cannot be taken (too large, not a regular file)
        found = Found("none", remarks=[f"Отправку не удалось прочитать: {escape.name(str(exc))}"])
    print(f"{hw.name}, parts {' '.join(graded)}; the kit in {ROOT} (commit {config.get('kit', {}).get('commit')})")
    print("\n".join(found.remarks), flush=True)
    print(f"confinement: {confine.mode()}", flush=True)
    unconfined = confine.unconfined_refused(bool(config.get("allow_unconfined")))
    if unconfined:  # the instructor's log says it as well as the student's page
        print(unconfined, flush=True)
        data = _not_graded(hw, graded, unconfined)
    elif found.kind == "none":
        data = _not_graded(hw, graded, "в отправке нет решения: ни модулей, ни тетрадки .ipynb")
    else:
        with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
            scratch = Path(tmp)
            try:
                options, paths = _stage(hw, found, scratch)
            except OSError as exc:  # a file of the upload that cannot be taken (too large, not a regular file)
                said = f"отправку не удалось прочитать: {escape.name(str(exc))}"
                found.remarks.append(said)
                data = _not_graded(hw, graded, said)
            else:
                results = scratch / "results.json"
                command = [sys.executable, str(ROOT / "homework" / "check.py"), hw.name, *(config.get("parts") or []),
                           *options, "--json", str(results)]
                env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONIOENCODING="utf-8")
                proc = subprocess.run(command, cwd=str(ROOT), capture_output=True, text=True, encoding="utf-8",
                                      errors="replace", env=env)
                # the instructor's log (results/stdout), with the upload's paths, not the scratch folder's
                print(_replace(proc.stdout, paths), _replace(proc.stderr, paths), sep="\n", flush=True)
                if results.is_file():
                    data = _replace(json.loads(results.read_text(encoding="utf-8")), paths)
                else:
                    said = _replace((proc.stderr or proc.stdout).strip(), paths)
                    data = _not_graded(hw, graded, f"проверка не выдала результатов (код {proc.returncode}):\n{said}")
    export.set_visibility(data, [tuple(rule) for rule in config.get("visibility", [])],
                          config.get("default_visibility", "visible"), config.get("hidden_inputs", "after_published"))
    data["output"] = export.summary(data, preface=found.remarks)
    data["execution_time"] = max(int(data.get("execution_time", 0)), round(time.perf_counter() - started))
    return data


def autograde(root: Path) -> int:
    """``run_autograder``: grade, write ``root/results/results.json``, return 0 (1 if the grader failed)."""
    out = root / "results" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    status = 0
    try:
        data = grade(root, load_config())
    except Exception:  # noqa: BLE001 - Gradescope must get a results.json whatever happens
        traceback.print_exc(file=sys.stdout)
        status = 1
        data = {"score": 0.0, "execution_time": 0, "visibility": "visible", "tests": [],
                "output": "Автопроверка не сработала (ошибка самой проверки, не вашего кода). "
                          "Сообщите преподавателю."}
    out.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    print(f"results.json: {data.get('score')} points, {len(data.get('tests', []))} tests")
    return status


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8", errors="replace")
    p = argparse.ArgumentParser(prog="python -m grader.gradescope", description=__doc__.splitlines()[0],
                                epilog="examples:\n  python -m grader.gradescope autograder.zip\n"
                                       "  python -m grader.gradescope autograder.zip HW PART1 PART2 "
                                       "--visibility 'PART1::test_*_random=after_published'\n"
                                       "see docs/gradescope.md", formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", nargs="?", help="the zip to write (upload it on the assignment's Configure Autograder page)")
    p.add_argument("homework", nargs="?", help="the homework (default: the only one)")
    p.add_argument("parts", nargs="*", help="grade only these parts (default: all)")
    p.add_argument("--visibility", action="append", default=[], metavar="PART[::CHECK]=LEVEL",
                   help="when students see these tests: " + ", ".join(export.VISIBILITY) + " (repeatable; the last "
                        "matching rule wins)")
    p.add_argument("--default-visibility", default="visible", choices=export.VISIBILITY,
                   help="the visibility of the other tests (default: visible)")
    p.add_argument("--hidden-inputs-visibility", default="after_published", choices=export.VISIBILITY,
                   help="no sooner than this, students see the checks that failed on hidden inputs (their "
                        "inputs, expected answers and the student's text never; default: after_published)")
    p.add_argument("--force", action="store_true", help="do not refuse when generated files are stale")
    p.add_argument("--allow-default-secret", action="store_true",
                   help="grade hidden inputs from the kit's default secret (for a trial; see "
                        "python -m grader.grading.secret)")
    p.add_argument("--allow-unconfined", action="store_true",
                   help="grade even where the container confines the submission's code neither by namespaces nor by "
                        "a user of its own (the code could then read the answer key and the secret)")
    p.add_argument("--autograde", action="store_true", help="grade a submission (what run_autograder calls)")
    p.add_argument("--root", default=None, help=f"with --autograde: the autograder's root (default: ${ROOT_ENV} "
                                                "or /autograder)")
    args = p.parse_args(argv)
    if args.autograde:
        return autograde(Path(args.root or os.environ.get(ROOT_ENV) or "/autograder"))
    if not args.out:
        p.error("name the zip to write, e.g. autograder.zip")
    try:
        rules = [parse_rule(r) for r in args.visibility]
        names = build(Path(args.out), args.homework, args.parts, rules, args.default_visibility, args.force,
                      args.allow_default_secret, args.hidden_inputs_visibility, args.allow_unconfined)
    except GradescopeError as exc:
        print(f"gradescope: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, StaleRecords) else 1
    size = Path(args.out).stat().st_size
    print(f"wrote {args.out}: {len(names)} files, {size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
