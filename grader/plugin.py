"""The pytest plugin behind the graded suites.

It gives the tests the implementation under test (``--impl``: ``homework``, ``solutions``, a folder
or a notebook), and, with ``--results-file``, writes one JSON line per event (collected, start,
module load, result) so that the grader's parent process can follow a run, survive a hang or a
crash of the child, and explain each failure in Russian.
"""
from __future__ import annotations

import copy
import faulthandler
import io
import json
import os
import random
import re
import sys
import types
import zlib
from pathlib import Path

import numpy as np
import pytest

from grader import guard
from grader.checks import CheckFailure
from grader.homeworks import ROOT
from grader.loading import (MissingFunction, ModuleLoadError, NamespaceImplementation, NotebookImplementation,
                            describe_exception, implementation)

_IMPLS: dict[str, object] = {}
_NAMESPACES: dict[str, NamespaceImplementation] = {}  # --impl namespace:N -> a live namespace of this process
_RESULTS = None  # an open results file, when the grader asked for one
_HANG = None  # where faulthandler writes the stacks of a check that runs past --check-timeout
_HANG_AFTER = None


def pytest_addoption(parser):
    group = parser.getgroup("homework grader")
    group.addoption("--impl", default=os.environ.get("HWKIT_IMPL", "homework"),
                    help="what to grade: homework (default), solutions, a folder of modules, or a .ipynb")
    group.addoption("--results-file", default=None, help="write JSON-lines events for the grader here")
    group.addoption("--check-timeout", type=float, default=None,
                    help="with --results-file: after this many seconds in one check, write where the code is "
                         "to <results-file>.hang and exit (the grader reports the check as timed out)")
    group.addoption("--hung-functions", default=None,
                    help='JSON {"module": {"function": "title of the check it hung in"}}: calls fail at once')


def pytest_configure(config):
    global _RESULTS
    config.addinivalue_line("markers", "check(title, weight=1, bonus=False): a graded check")
    _PRISTINE.clear()  # a new session (the notebook runs several in one process) snapshots its own test modules
    path = config.getoption("--results-file", default=None)
    if path:
        _RESULTS = open(path, "a", encoding="utf-8", buffering=1)
        global _HANG, _HANG_AFTER
        _HANG_AFTER = config.getoption("--check-timeout", default=None)
        if _HANG_AFTER:
            _HANG = open(str(path) + ".hang", "w", encoding="utf-8")


def pytest_unconfigure(config):
    global _RESULTS
    if _RESULTS is not None:
        _emit({"event": "finished"})
        _RESULTS.close()
        _RESULTS = None


def _emit(record: dict) -> None:
    if _RESULTS is not None:
        _RESULTS.write(json.dumps(record, ensure_ascii=False) + "\n")
        _RESULTS.flush()


def pytest_collection_finish(session):
    items = []
    for item in session.items:
        title, weight, bonus = _title(item)
        items.append({"nodeid": item.nodeid, "name": item.name, "title": title, "weight": weight, "bonus": bonus})
        module = getattr(item, "module", None)
        if module is not None and module.__name__ not in _PRISTINE:
            _PRISTINE[module.__name__] = _snapshot(module)
    guard.snapshot({item.module for item in session.items if getattr(item, "module", None) is not None})
    _emit({"event": "collected", "nodeids": [item.nodeid for item in session.items], "items": items})


# ---- one check cannot change another: module data, global random state, output --------------------

_PRISTINE: dict[str, dict] = {}  # test module -> deep copies of its module-level data, taken before any check ran
_DATA = (list, dict, set, bytearray, np.ndarray)


def _snapshot(module) -> dict:
    saved = {}
    for name, value in vars(module).items():
        if isinstance(value, _DATA) and not name.startswith("_"):  # `_CACHE = {}` stays a cache across checks
            try:
                saved[name] = copy.deepcopy(value)
            except Exception:  # noqa: BLE001 - what cannot be copied cannot be restored either
                pass
    return saved


class _Sink(io.TextIOBase):
    """Stands for sys.stdout/sys.stderr during a check: the student's prints cost nothing and go nowhere."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self):
        self.buffer = io.BytesIO()  # for code that writes bytes to sys.stdout.buffer; emptied after each check

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        return len(text)

    def isatty(self) -> bool:
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before each check: the test module's data as written, and, under the grader, a fixed global random state.

    A function that mutates a list the test module shares (``values.append(...)``) or reseeds NumPy's global
    generator must not change the outcome of the checks that run after it; a check also gives the same
    result alone (the rerun command) as in the whole run. Module-level data whose name starts with ``_``
    is left alone (a cache shared by checks); so are fixtures.
    """
    module = getattr(item, "module", None)
    for name, value in _PRISTINE.get(getattr(module, "__name__", ""), {}).items():
        setattr(module, name, copy.deepcopy(value))
    guard.replaced()  # whatever an earlier check replaced (already reported there) is put back
    if _RESULTS is not None:
        seed = zlib.crc32(item.nodeid.encode("utf-8"))
        random.seed(seed)
        np.random.seed(seed)


@pytest.hookimpl(hookwrapper=True, trylast=True)  # inside pytest's own capturing, which would replace sys.stdout
def pytest_runtest_call(item):
    yield from _quiet()


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_fixture_setup(fixturedef, request):
    yield from _quiet()  # loading the student's module runs its top-level prints


def _quiet():
    """Under the grader, the student's output is discarded (megabytes of prints must not slow grading down)."""
    if _RESULTS is None:
        yield
        return
    saved = sys.stdout, sys.stderr, sys.stdin
    sys.stdout = sys.stderr = _Sink()
    sys.stdin = io.StringIO("")  # input() meets the end of input at once instead of pytest's English OSError
    try:
        yield
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved


def register_namespace(namespace: dict) -> str:
    """An ``--impl`` value that stands for a live namespace (a notebook's globals) in this process.

    For in-process runs only (``grader.notebook.check``); call :func:`forget_namespace` afterwards.
    """
    key = f"namespace:{len(_NAMESPACES)}:{id(namespace)}"
    _NAMESPACES[key] = NamespaceImplementation(namespace)
    return key


def forget_namespace(key: str) -> None:
    _NAMESPACES.pop(key, None)


def _impl_for(config, hw_name: str):
    spec = config.getoption("--impl")
    if spec in _NAMESPACES:
        return _with_provided(_NAMESPACES[spec], hw_name)
    if spec in ("homework", "solutions"):
        path = ROOT / spec / hw_name
    else:
        path = Path(spec)
    key = str(path)
    if key not in _IMPLS:
        _IMPLS[key] = implementation(path)
    return _with_provided(_IMPLS[key], hw_name)


def _with_provided(impl, hw_name: str):
    """A notebook holds only the parts' functions: tests asking for ``envs`` get the homework's provided module."""
    if hasattr(impl, "use_provided"):
        from grader import homeworks

        impl.use_provided(set(homeworks.load(hw_name).modules), ROOT / "homework" / hw_name)
    return impl


def module_fixture(name: str):
    """A session fixture giving the module ``name`` of the implementation under test.

    In a homework's conftest (``tests/<hw>/conftest.py``): ``ppo = module_fixture("ppo")``;
    a graded test then takes ``ppo`` as an argument and never imports the module by name.
    """
    hw_name = Path(sys._getframe(1).f_globals["__file__"]).resolve().parent.name

    @pytest.fixture(scope="session", name=name)
    def _fixture(request):
        impl = _impl_for(request.config, hw_name)
        _emit({"event": "load-start", "module": name})
        try:
            module = impl.module(name)
        finally:
            _emit({"event": "load-end", "module": name})
        swapped = guard.replaced()
        if swapped:
            raise ModuleLoadError(guard.message(swapped, f"при загрузке {name}.py"))
        _stub_hung_functions(module, name, request.config)
        module = _record_calls(module, name, hw_name)  # PROVISIONAL (H2)
        if isinstance(impl, NotebookImplementation) and impl.cell_errors and not getattr(impl, "_reported", False):
            impl._reported = True
            _emit({"event": "notes", "lines": impl.cell_errors})
        return module

    return _fixture


_CALLED: dict[str, list[str]] = {}  # PROVISIONAL (H2): nodeid -> functions of the module under test it called


def _record_calls(module, name: str, hw_name: str):
    """PROVISIONAL (H2), to be replaced by the worker proxy: the module as the tests see it, a copy whose public
    functions record, per check, that the test called them (in order of first call); the result record carries
    them as ``functions`` (grader.runner.CheckResult.functions). The student's own calls between their functions
    go through the original module and are not recorded (nor slowed down, nor made deeper)."""
    import functools

    from grader import homeworks

    if _RESULTS is None or name not in homeworks.load(hw_name).modules:
        return module
    view = types.ModuleType(module.__name__, getattr(module, "__doc__", None))
    for attr, value in list(vars(module).items()):
        if not attr.startswith("_") and isinstance(value, types.FunctionType):
            @functools.wraps(value)
            def recorded(*args, _func=value, _name=attr, **kwargs):
                called = _CALLED.setdefault(os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0], [])
                if _name not in called:
                    called.append(_name)
                return _func(*args, **kwargs)

            value = recorded
        setattr(view, attr, value)
    return view


class HungFunction(Exception):
    """A call of a student's function that already ran past the time limit in an earlier check."""


def _stub_hung_functions(module, name: str, config) -> None:
    """Replace the functions that hung in an earlier check of this run by ones that fail at once.

    The grader's parent passes them (``--hung-functions``) after a timeout it traced to a function of
    this module: every later check that calls it fails quickly, saying where it hung, instead of
    waiting out the limit again; the checks that do not call it run as usual.
    """
    spec = config.getoption("--hung-functions", default=None)
    hung = json.loads(spec).get(name, {}) if spec else {}
    limit = config.getoption("--check-timeout", default=None)
    for func, title in hung.items():
        if not isinstance(getattr(module, func, None), types.FunctionType):
            continue

        def stub(*args, _func=func, _title=title, **kwargs):
            raise HungFunction(f"функция {_func} не запускалась: она уже зависла в проверке «{_title}»\n"
                               f"(превышено время, {limit:g} с). Исправьте зацикливание, и эти проверки "
                               "запустятся по-настоящему.")

        setattr(module, func, stub)


# ---- explaining failures -------------------------------------------------------------------------

def _impl_root(config) -> Path | None:
    for impl in _IMPLS.values():
        return getattr(impl, "folder", None) or getattr(impl, "path", None)
    return None


def explain(excinfo, config) -> tuple[str, str]:
    """(kind, message) for an exception raised by a test: kind is check, todo, timeout or error."""
    exc = excinfo.value
    live = _NAMESPACES.get(config.getoption("--impl", default=None))
    if live is not None and not isinstance(exc, (CheckFailure, ModuleLoadError, SystemExit, RecursionError)):
        frame = live.student_frame(exc)
        if isinstance(exc, NotImplementedError):
            func = frame.name if frame else (str(exc).replace("TODO:", "").strip() or "функция")
            return "todo", f"не реализовано (TODO): {func}"
        if frame is not None:
            return "error", f"ошибка в вашем коде: {live.describe_error(exc)}"
    inside = _impl_root(config)
    if isinstance(exc, CheckFailure):
        return "check", str(exc)
    if isinstance(exc, HungFunction):
        return "hung", str(exc)
    if isinstance(exc, MissingFunction):  # a notebook without one of the part's functions: like a TODO
        return "todo", str(exc)
    if isinstance(exc, ModuleLoadError):
        return "load", str(exc)
    if isinstance(exc, NotImplementedError):
        func = _student_function(exc, inside) or str(exc).replace("TODO:", "").strip() or "функция"
        return "todo", f"не реализовано (TODO): {func}"
    if isinstance(exc, SystemExit):
        return "error", (f"ваш код вызвал sys.exit({exc.code!r}) — функциям домашней работы выходить из программы "
                         "не нужно: верните результат через return.")
    if isinstance(exc, EOFError) or (isinstance(exc, OSError) and "reading from stdin" in str(exc)):
        return "error", (f"ваш код ждёт ввода с клавиатуры (input()): при проверке ввода нет. Уберите input() — "
                         f"функция получает всё через аргументы. {describe_exception(exc, inside)}")
    if isinstance(exc, RecursionError):
        return "error", f"слишком глубокая рекурсия: {describe_exception(exc, inside)}"
    if inside is not None and _student_function(exc, inside):
        return "error", f"ошибка в вашем коде: {describe_exception(exc, inside)}"
    return "error", (f"ошибка при проверке ответа: {describe_exception(exc)}\n"
                     "Подсказка: проверьте тип и форму того, что возвращает функция (см. её docstring).")


def _student_function(exc: BaseException, inside: Path | None) -> str | None:
    import traceback

    if inside is None:
        return None
    inside = inside.resolve()
    names = []
    for frame in traceback.extract_tb(exc.__traceback__):
        try:
            path = Path(frame.filename).resolve()
        except OSError:
            continue
        if path == inside or path.is_relative_to(inside if inside.is_dir() else inside.parent) or frame.filename.startswith("<ячейка"):
            names.append(frame.name)
    return names[-1] if names else None


_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{(\w+)(:[^{}]*)?\}")


def _fill(match, params: dict) -> str:
    """``{lam}`` or ``{adv:+g}`` from the test's parameters; ``{{``/``}}`` as in str.format; other braces
    (``δ_{t+l}``) stay as written."""
    if match.group(1) is None:
        return match.group(0)[0]
    name, spec = match.group(1), (match.group(2) or ":")[1:]
    if name not in params:
        return match.group(0)
    try:
        return format(params[name], spec)
    except (TypeError, ValueError):
        return str(params[name])


def _title(item) -> tuple[str, float, bool]:
    marker = item.get_closest_marker("check")
    if marker is None:
        doc = (getattr(item.obj, "__doc__", None) or "").strip().splitlines()
        return (doc[0] if doc else item.name), 1.0, False
    title = marker.args[0] if marker.args else item.name
    params = getattr(getattr(item, "callspec", None), "params", {})
    title = _PLACEHOLDER.sub(lambda m: _fill(m, params), title)
    return title, float(marker.kwargs.get("weight", 1.0)), bool(marker.kwargs.get("bonus", False))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "call":
        swapped = guard.replaced()
        if swapped and not hasattr(item, "_hw_failure"):
            item._hw_failure = ("error", guard.message(swapped, "во время проверки"), report.longreprtext)
            report.outcome = "failed"
    if call.excinfo is not None and report.failed and not hasattr(item, "_hw_failure"):
        kind, message = explain(call.excinfo, item.config)
        item._hw_failure = (kind, message, report.longreprtext)
    if call.when == "teardown":
        if _HANG is not None:
            faulthandler.cancel_dump_traceback_later()
        title, weight, bonus = _title(item)
        failure = getattr(item, "_hw_failure", None)
        _emit({
            "event": "result",
            "nodeid": item.nodeid,
            "name": item.name,
            "title": title,
            "weight": weight,
            "bonus": bonus,
            "outcome": "failed" if failure else "passed",
            "kind": failure[0] if failure else "",
            "message": failure[1] if failure else "",
            "traceback": failure[2] if failure else "",
            "functions": _CALLED.pop(item.nodeid, []),  # PROVISIONAL (H2)
        })


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if _HANG is not None:
        # a watchdog thread in C: it dumps every thread's stack and exits even while the student's code
        # holds the interpreter in an endless loop (no signals, so it works on Windows too)
        faulthandler.dump_traceback_later(_HANG_AFTER, exit=True, file=_HANG)
    title, weight, bonus = _title(item)
    _emit({"event": "start", "nodeid": item.nodeid, "name": item.name, "title": title, "weight": weight,
           "bonus": bonus})
