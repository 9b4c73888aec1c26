"""Pins of the kit's base install (``constraints.txt``): the environment the kit's own tests run in (README's
command and CI install with ``-c constraints.txt``) and the one the Gradescope autograder installs; and of the
extras in ``PINNED_EXTRAS`` (the class report's copydetect, which CI installs with ``dev``), with their own
dependencies.

    python -m grader.authoring.constraints [--python PYTHON ...] [--check]

For each interpreter (default: every Python 3.9+ that ``pyenv`` or the PATH has) the command makes a fresh virtual
environment, installs the kit's base dependencies there (``pyproject.toml``'s ``dependencies``, and the packages of
``PINNED_EXTRAS``, which pip resolves for that Python: numpy 2.4 needs 3.11, an Ubuntu 22.04 image has 3.10) and
notes what was installed. The file holds
one ``name==version`` line per package, with a ``; python_version == "3.X"`` marker where the versions differ, so
one file serves every Python (a Python it does not name installs unpinned). ``--check``: exits 1 when the file
pins other versions than a fresh resolution (a new release since: refresh, run the kit's tests, commit).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from grader.base.homeworks import ROOT, tomllib

FILE = ROOT / "constraints.txt"
PINNED_EXTRAS = ("report",)  # installed with the base in one resolution, so that their shared packages agree
HEADER = ("# the kit's base install and its extras {extras}, resolved for Python {versions} by "
          "`python -m grader.authoring.constraints`; do not edit\n"
          "# (pip install -c constraints.txt ...: a Python not named here installs unpinned)\n")


def requirements(root: Path = ROOT) -> tuple[list[str], str]:
    """The kit's dependencies and its ``requires-python``, from pyproject.toml."""
    with (Path(root) / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f).get("project", {})
    return list(project.get("dependencies", [])), project.get("requires-python", "")


def interpreters() -> list[str]:
    """Every Python 3.9+ this machine has: pyenv's versions, else ``python3.X`` on the PATH."""
    found: dict[str, str] = {}
    root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip() \
        if shutil.which("pyenv") else ""
    for folder in sorted(Path(root, "versions").glob("3.*")) if root else []:
        python = folder / "bin" / "python"
        m = re.fullmatch(r"3\.(\d+)\.\d+", folder.name)
        if m and int(m.group(1)) >= 9 and python.is_file():
            found.setdefault(f"3.{m.group(1)}", str(python))
    for minor in range(9, 20):
        exe = shutil.which(f"python3.{minor}")
        if exe:
            found.setdefault(f"3.{minor}", exe)
    return [found[v] for v in sorted(found, key=lambda v: int(v.split(".")[1]))]


def version_of(python: str) -> str:
    out = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def extras(root: Path = ROOT) -> list[str]:
    """The requirements of the extras in ``PINNED_EXTRAS``, from pyproject.toml."""
    with (Path(root) / "pyproject.toml").open("rb") as f:
        optional = tomllib.load(f).get("project", {}).get("optional-dependencies", {})
    return [req for name in PINNED_EXTRAS for req in optional.get(name, [])]


def resolve(python: str) -> dict[str, str]:
    """Package -> version of the base install with ``PINNED_EXTRAS``, as a fresh virtual environment of ``python``
    gets it."""
    deps = requirements(ROOT)[0] + extras(ROOT)
    with tempfile.TemporaryDirectory(prefix="hwkit-pins-") as tmp:
        subprocess.run([python, "-m", "venv", tmp], check=True)
        bin_python = str(Path(tmp) / "bin" / "python")
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
        subprocess.run([bin_python, "-m", "pip", "install", "--quiet", *deps], check=True, env=env)
        frozen = subprocess.run([bin_python, "-m", "pip", "freeze", "--all"], capture_output=True, text=True,
                                check=True, env=env).stdout
    pins = dict(line.split("==", 1) for line in frozen.splitlines() if "==" in line)
    return {name: v for name, v in pins.items() if name.lower() not in ("pip", "setuptools", "wheel")}


def merged(resolved: dict[str, dict[str, str]]) -> str:
    """The constraints file for ``resolved`` (Python version -> pins): one line per package and version, with the
    Pythons it is for as markers unless it is the same for all."""
    versions = sorted(resolved, key=lambda v: int(v.split(".")[1]))
    lines = []
    for name in sorted({n for pins in resolved.values() for n in pins}, key=str.lower):
        by_version: dict[str, list[str]] = {}
        for py in versions:
            if name in resolved[py]:
                by_version.setdefault(resolved[py][name], []).append(py)
        for version, pys in by_version.items():
            if pys == versions:
                lines.append(f"{name}=={version}")
            else:
                lines.append(f"{name}=={version}; " + " or ".join(f'python_version == "{py}"' for py in pys))
    head = HEADER.format(extras=", ".join(f"[{e}]" for e in PINNED_EXTRAS), versions=", ".join(versions))
    return head + "".join(line + "\n" for line in lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", action="append", default=[], help="an interpreter to pin for (repeatable)")
    p.add_argument("--check", action="store_true", help="say whether the file is out of date; write nothing")
    args = p.parse_args(argv)
    pythons = args.python or interpreters()
    if not pythons:
        print("no Python 3.9+ found: name one with --python", file=sys.stderr)
        return 2
    text = merged({version_of(python): resolve(python) for python in pythons})
    if args.check:
        if not FILE.is_file() or FILE.read_text(encoding="utf-8") != text:
            print("constraints.txt is out of date: run `python -m grader.authoring.constraints`, then the kit's tests")
            return 1
        return 0
    FILE.write_text(text, encoding="utf-8")
    print(f"constraints.txt: {len(text.splitlines()) - 2} lines for Python {', '.join(map(version_of, pythons))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
