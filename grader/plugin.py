"""The pytest plugin behind the graded suites.

It gives the tests the implementation under test (``--impl``: ``homework``, ``solutions``, a folder
or a notebook), and, with ``--results-file``, writes one JSON line per event (collected, start,
module load, result) so that the grader's parent process can follow a run, survive a hang or a
crash of the child, and explain each failure in Russian.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from grader.checks import CheckFailure
from grader.homeworks import ROOT
from grader.loading import ModuleLoadError, NotebookImplementation, describe_exception, implementation

_IMPLS: dict[str, object] = {}
_RESULTS = None  # an open results file, when the grader asked for one


def pytest_addoption(parser):
    group = parser.getgroup("homework grader")
    group.addoption("--impl", default=os.environ.get("HWKIT_IMPL", "homework"),
                    help="what to grade: homework (default), solutions, a folder of modules, or a .ipynb")
    group.addoption("--results-file", default=None, help="write JSON-lines events for the grader here")


def pytest_configure(config):
    global _RESULTS
    config.addinivalue_line("markers", "check(title, weight=1, bonus=False): a graded check")
    path = config.getoption("--results-file", default=None)
    if path:
        _RESULTS = open(path, "a", encoding="utf-8", buffering=1)


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
    _emit({"event": "collected", "nodeids": [item.nodeid for item in session.items]})


def _impl_for(config, hw_name: str):
    spec = config.getoption("--impl")
    if spec in ("homework", "solutions"):
        path = ROOT / spec / hw_name
    else:
        path = Path(spec)
    key = str(path)
    if key not in _IMPLS:
        _IMPLS[key] = implementation(path)
    return _IMPLS[key]


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
        if isinstance(impl, NotebookImplementation) and impl.cell_errors and not getattr(impl, "_reported", False):
            impl._reported = True
            _emit({"event": "notes", "lines": impl.cell_errors})
        return module

    return _fixture


# ---- explaining failures -------------------------------------------------------------------------

def _impl_root(config) -> Path | None:
    for impl in _IMPLS.values():
        return getattr(impl, "folder", None) or getattr(impl, "path", None)
    return None


def explain(excinfo, config) -> tuple[str, str]:
    """(kind, message) for an exception raised by a test: kind is check, todo, timeout or error."""
    exc = excinfo.value
    inside = _impl_root(config)
    if isinstance(exc, CheckFailure):
        return "check", str(exc)
    if isinstance(exc, ModuleLoadError):
        return "error", str(exc)
    if isinstance(exc, NotImplementedError):
        func = _student_function(exc, inside) or str(exc).replace("TODO:", "").strip() or "функция"
        return "todo", f"не реализовано (TODO): {func}"
    if isinstance(exc, SystemExit):
        return "error", (f"ваш код вызвал sys.exit({exc.code!r}) — функциям домашней работы выходить из программы "
                         "не нужно: верните результат через return.")
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


def _title(item) -> tuple[str, float, bool]:
    marker = item.get_closest_marker("check")
    if marker is None:
        doc = (getattr(item.obj, "__doc__", None) or "").strip().splitlines()
        return (doc[0] if doc else item.name), 1.0, False
    title = marker.args[0] if marker.args else item.name
    params = getattr(getattr(item, "callspec", None), "params", {})
    try:
        title = title.format(**params)
    except (KeyError, IndexError, ValueError):
        pass
    return title, float(marker.kwargs.get("weight", 1.0)), bool(marker.kwargs.get("bonus", False))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and report.failed and not hasattr(item, "_hw_failure"):
        kind, message = explain(call.excinfo, item.config)
        item._hw_failure = (kind, message, report.longreprtext)
    if call.when == "teardown":
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
        })


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    title, weight, bonus = _title(item)
    _emit({"event": "start", "nodeid": item.nodeid, "name": item.name, "title": title, "weight": weight,
           "bonus": bonus})
