"""The checks' own tools stay the checks' own: the code under test cannot swap them out.

A graded check computes its expected values and compares answers with NumPy, ``math``, the builtins,
``grader.checks`` and the test module's functions. Student code that replaces one of them
(``np.allclose = lambda *a, **k: True``, ``sys.modules[...].check_close = ...``), on purpose or by
accident, would change every verdict after it. The plugin takes a snapshot of these namespaces
before any student code runs, finds what was replaced after the student's module loads and after
each check, puts the originals back, and fails the check (or the module) that did it.
"""
from __future__ import annotations

import builtins
import math
import types

import numpy as np

from grader import checks

_SNAPSHOT: dict[tuple[int, str], tuple[types.ModuleType, object]] = {}


def _namespaces() -> list[types.ModuleType]:
    return [builtins, math, np, np.random, np.linalg, checks]


def _protect(module: types.ModuleType) -> None:
    for name, value in vars(module).items():
        if callable(value) and not name.startswith("__"):
            _SNAPSHOT[(id(module), name)] = (module, value)


def snapshot(extra_modules=()) -> None:
    """Remember the callables of the protected namespaces and of ``extra_modules`` (the test modules)."""
    for module in [*_namespaces(), *extra_modules]:
        _protect(module)


def replaced() -> list[str]:
    """What was replaced or deleted since the snapshot, as ``np.allclose``; puts the originals back."""
    names = []
    for (_, name), (module, value) in _SNAPSHOT.items():
        if vars(module).get(name) is not value:
            setattr(module, name, value)
            short = "np" if module is np else module.__name__.replace("numpy.", "np.")
            names.append(f"{short}.{name}")
    return sorted(names)


def message(names: list[str], when: str) -> str:
    shown = ", ".join(names[:5]) + (" и ещё " + str(len(names) - 5) if len(names) > 5 else "")
    return (f"ваш код {when} подменил {shown}. Проверки считают ответы этими функциями, поэтому подменять их "
            "нельзя: оригиналы восстановлены, а проверка не засчитана. Уберите присваивание вида "
            "`np.имя = ...` из своего кода.")
