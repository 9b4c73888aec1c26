"""What an instructor tool needs beyond the base install (``pip install -e .``: numpy, pytest, tomli).

A tool that needs a package of an extra (``nbformat`` to build the notebook, the kit's own test packages) gets it
from :func:`require`; where the package is missing, the tool ends with exit 2 and one line on stderr naming the
extra to install, never a traceback. :func:`missing` says the same line without ending anything, for a tool that can
do the rest of its work without the package (``grader.authoring.build --check`` checks the modules, then says the
notebook needs the extra).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path


def _tool() -> str:
    """The running tool's name as its messages start (``build`` for ``python -m grader.authoring.build``)."""
    return Path(sys.argv[0]).stem if sys.argv and sys.argv[0] not in ("", "-c") else "grader"


def line(module: str, extra: str, purpose: str) -> str:
    """The one line: what needs ``module``, and the command that installs the extra holding it."""
    return (f"{_tool()}: {purpose} needs {module}, which the base install leaves out; install the kit with the "
            f"\"{extra}\" extra: python -m pip install -e \".[{extra}]\"")


def missing(module: str, extra: str, purpose: str) -> str | None:
    """:func:`line` when ``module`` cannot be imported here, else None."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module set to None in sys.modules
        found = False
    return None if found else line(module, extra, purpose)


def require(module: str, extra: str, purpose: str):
    """The module ``module``; where it is not installed, the one line on stderr and exit 2."""
    try:
        return importlib.import_module(module)
    except ImportError:
        print(line(module, extra, purpose), file=sys.stderr)
        raise SystemExit(2) from None
