"""Running a part's graded checks from inside a notebook: ``check("PART")`` in a check cell.

The check cell hands the notebook's own namespace (the functions the student has just defined) to
the same graded suite the command line runs, in this process, and prints the same scoreboard and
feedback. It never raises: a failed check prints its explanation and the notebook runs on.

Unlike the command line, checks run in the notebook's kernel, so there is no time limit per check:
a function that loops forever keeps the cell busy until the kernel is interrupted.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

from grader.base import homeworks
from grader.base.homeworks import ROOT, UsageError

_RERUN = "\x00rerun\x00"  # stands in for the command-line prefix; replaced by check("…") below


def check(part: str | None = None, namespace: dict | None = None, *, homework: str | None = None,
          verbose: bool = False) -> None:
    """Grade the functions defined in this notebook and print the scoreboard.

    ``part`` is a part id, one check (``"PART::test_name[id]"``), or None for all
    parts. ``namespace`` defaults to the caller's globals (a notebook's namespace). ``homework``
    defaults to the notebook's ``HOMEWORK`` variable, or to the only homework there is.
    """
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    try:
        hw = homeworks.load(homework or namespace.get("HOMEWORK") or _only_homework())
        selected = hw.select([part] if part else [])
    except UsageError as exc:
        print(f"ошибка: {exc}")
        return None
    try:
        results = [_run_in_process(hw, p, namespace, sel) for p, sel in selected]
    except KeyboardInterrupt:
        print("Проверка прервана.")
        return None
    from grader.reporting.feedback import scoreboard

    text = scoreboard(hw, results, "функции, определённые в этой тетрадке", _RERUN, verbose=verbose,
                      partial=any(sel is not None for _, sel in selected))
    print(_notebook_reruns(text))
    return None


def _only_homework() -> str:
    names = homeworks.available()
    if len(names) != 1:
        raise UsageError("укажите домашнюю работу: check(часть, homework=...). Есть: " + ", ".join(names))
    return names[0]


def _notebook_reruns(text: str) -> str:
    from grader.reporting.feedback import VERBOSE_NOTE

    lines = []
    for line in text.splitlines():
        if _RERUN in line:
            line = line.replace(f'{_RERUN} "', 'check("', 1).rstrip() + ")"
        lines.append(line)
    return "\n".join(lines).replace(VERBOSE_NOTE, VERBOSE_NOTE.replace("-v", "check(..., verbose=True)"))


def _run_in_process(hw, part, namespace: dict, selection: list[str] | None):
    """One part's graded checks against ``namespace``, with pytest in this process."""
    import pytest

    from grader.base.results import PartResult
    from grader.boundary.loading import working_directory
    from grader.boundary.tracing import room_for_tracing
    from grader.grading import plugin
    from grader.grading.runner import PYTEST_FLAGS, Reader, check_results, collection_error, notes

    started = time.perf_counter()
    result = PartResult(part)
    test_file = hw.tests_dir / part.tests
    if not test_file.is_file():
        result.error = f"нет файла с проверками {test_file.relative_to(ROOT)}"
        return result
    rel = test_file.relative_to(ROOT).as_posix()
    targets = [f"{rel}::{s}" for s in selection] if selection else [rel]
    impl = plugin.register_namespace(namespace)
    output = io.StringIO()
    random_states = _random_states()  # the grader seeds the global generators per check: give the kernel its own back
    try:
        with tempfile.TemporaryDirectory(prefix="hwcheck-") as tmp:
            results_file = Path(tmp) / "results.jsonl"
            results_file.touch()
            args = [*targets, f"--impl={impl}", f"--results-file={results_file}", *PYTEST_FLAGS,
                    "-p", "no:faulthandler", "--capture=sys"]
            with contextlib.ExitStack() as stack:
                stack.enter_context(contextlib.redirect_stdout(output))
                stack.enter_context(contextlib.redirect_stderr(output))
                stack.enter_context(warnings.catch_warnings())
                stack.enter_context(working_directory(ROOT))
                stack.enter_context(room_for_tracing())  # the notebook's functions are traced (boundary.tracing)
                stack.enter_context(public_inputs())  # a self-check: the grade runs hidden inputs elsewhere
                pytest.main(args)
            reader = Reader(results_file)
            reader.read()
    finally:
        plugin.forget_namespace(impl)
        _restore_random_states(random_states)
    result.checks = check_results(reader.records)
    result.notes = notes(reader.records)
    if not result.checks:
        result.error = collection_error(output.getvalue(), selection)
    result.seconds = time.perf_counter() - started
    return result


@contextlib.contextmanager
def public_inputs():
    """The notebook's self-check runs the public inputs only (grader.grading.hidden), even in the instructor's
    checkout."""
    from grader.grading.hidden import INPUTS_ENV

    before = os.environ.get(INPUTS_ENV)
    os.environ[INPUTS_ENV] = "public"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(INPUTS_ENV, None)
        else:
            os.environ[INPUTS_ENV] = before


def _random_states():
    import random

    import numpy as np

    return random.getstate(), np.random.get_state()


def _restore_random_states(states) -> None:
    import random

    import numpy as np

    random.setstate(states[0])
    np.random.set_state(states[1])
