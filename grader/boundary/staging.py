"""The files a worker gets: the submission's modules, staged into a scratch folder of a new name each time.

What this module takes from the submission: the regular ``.py`` files at the top of its folder (or the one
notebook), and packages of them, never a link (a link could point at the reference solutions), never a named pipe, a
device or a file over 4 MB, never a dot file, never a module named like one of the kit's provided modules (the kit's
own copy goes in its place). Each module's text is kept as it was copied, so that a hang report quotes the staged
file, never a path the worker names. The checking process imports the kit's provided modules (``envs``) from the
kit's tree, never the submission's copy; the command line checks that tree's digest (grader.grading.kit_digest) before
and after each checking process, so a kit changed by a worker (where no namespace keeps it read-only) grades nobody.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import sys
from pathlib import Path

from grader.base.homeworks import Homework

_IGNORED = {"__pycache__", ".ipynb_checkpoints", ".git", ".pytest_cache"}


def stage(source: Path, scratch: Path, provided: dict[str, Path], uid: int | None = None) -> dict[str, list[str]]:
    """Copy the submission at ``source`` into the new folder ``scratch`` with the kit's provided modules over any
    copy; return the staged modules' lines by file name. ``uid``: the user the worker runs as (without namespaces),
    who gets the folder as its own and no other user can enter it."""
    sources = {}
    os.chmod(scratch, 0o777)
    if source.is_file():
        shutil.copy2(source, scratch / source.name)
    elif source.is_dir():
        for entry in source.iterdir():
            if entry.name in _IGNORED or entry.name.startswith(".") or entry.is_symlink() or _odd(entry):
                continue  # a link could point at the reference solutions: only the submission's own files
            if entry.is_file() and entry.suffix == ".py" and entry.stem not in provided:
                shutil.copy2(entry, scratch / entry.name)  # before any worker: read back as written here
                text = (scratch / entry.name).read_bytes()[:1 << 20].decode("utf-8", errors="replace")
                sources[entry.name] = text.splitlines()
            elif entry.is_dir() and (entry / "__init__.py").is_file():
                shutil.copytree(entry, scratch / entry.name, symlinks=True, ignore=_no_links)
    for name, path in provided.items():
        shutil.copy2(path, scratch / f"{name}.py")
    if uid is not None:
        for folder, dirs, files in os.walk(scratch):
            for name in [*dirs, *files]:
                os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)
        os.chown(scratch, uid, uid)
        os.chmod(scratch, 0o700)
    return sources


STAGED_BYTES = 4 * 2**20  # the largest file of a submission that is staged (a sparse file of 300 MB would be
# written out in full, outside any limit of the worker's)


def _odd(path: Path) -> bool:
    """Neither a folder nor a regular file of a module's size: a named pipe (copying it would block), a device, a
    socket, a file larger than :data:`STAGED_BYTES`. Never staged: the code that wanted it finds it missing."""
    try:
        info = os.lstat(path)
    except OSError:
        return True
    return not stat.S_ISDIR(info.st_mode) and not (stat.S_ISREG(info.st_mode) and info.st_size <= STAGED_BYTES)


def _no_links(folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n in _IGNORED or os.path.islink(os.path.join(folder, n)) or
            _odd(Path(folder, n))}


def provided_modules(hw: Homework) -> dict[str, Path]:
    """The homework's provided modules (every module of homework/<hw>/ that is not a part's), from the kit."""
    found = {}
    for folder in (hw.homework_dir, hw.solutions_dir):
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
            if path.stem not in hw.modules:
                found[path.stem] = path  # solutions/ (the single source), when the kit has it, wins
    return found


def import_provided(hw: Homework, name: str):
    """The kit's provided module (``envs``), imported here under its plain name: a submission's copy never is.
    Its objects then pickle by reference to ``envs``, which the worker imports from its scratch folder."""
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(provided_modules(hw)[name]):
        return sys.modules[name]
    path = provided_modules(hw)[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
