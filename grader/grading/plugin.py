"""The pytest plugin behind the graded suites: the process that decides the grade.

It gives each graded test the module under test as a fixture (``--impl``: ``homework``, ``solutions``, a
folder of modules or a notebook). The student's code never runs here: a module fixture is a proxy whose
calls go to a worker process (grader/boundary/session.py). With ``--events``, the plugin writes one signed JSON line per
event (collected, result, notes, confinement, finished; grader/boundary/events.py) to its standard output and sends
pytest's own output to standard error, so the grader's command line (grader/grading/runner.py) reads the verdicts of
this process alone.

The in-notebook self-check (``grader.notebook.check``) is the one exception: it grades a live namespace of
the student's own kernel, in that process (``--impl namespace:N``).
"""
from __future__ import annotations

import copy
import json
import os
import random
import re
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from grader.base import call_summary, homeworks
from grader.base.escape import printable
from grader.base.homeworks import ROOT
from grader.boundary import confine, events, template, zygote
from grader.boundary.errors import RemoteError
from grader.boundary.loading import NamespaceImplementation
from grader.boundary.session import Session
from grader.boundary.staging import import_provided, provided_modules
from grader.grading import key
from grader.grading.checks import CheckFailure
from grader.grading.explain import explain
from grader.grading.hidden import INPUTS_ENV, hidden_mode

_NAMESPACES: dict[str, NamespaceImplementation] = {}  # --impl namespace:N -> a live namespace of this process
_STATE = pytest.StashKey[dict]()


def pytest_addoption(parser):
    group = parser.getgroup("homework grader")
    group.addoption("--impl", default=os.environ.get("HWKIT_IMPL", "homework"),
                    help="what to grade: homework (default), solutions, a folder of modules, or a .ipynb")
    group.addoption("--events", action="store_true", help="write JSON-lines events for the grader to stdout")
    group.addoption("--results-file", default=None, help="write the events to this file instead (in-process runs)")
    group.addoption("--check-timeout", type=float, default=None, help="seconds for one check (default: the part's)")
    group.addoption("--homework", default=None, help="the homework graded: its worker starts at once")
    group.addoption("--zygote", default=None, metavar="FD:FOLDER",
                    help="the zygote the grader's command line started for this process (grader/boundary/zygote.py)")
    group.addoption("--worker-template", default=None, type=int, metavar="FD",
                    help="a connection to the batch's worker template, which forks this process's zygotes "
                         "(grader/boundary/template.py)")
    group.addoption("--select", action="append", default=[], metavar="FILE::CHECK",
                    help="grade only these checks of test file FILE (a check's name, or its name without [params]); "
                         "a name that is no check of FILE: nothing is graded")


def pytest_configure(config):
    config.addinivalue_line("markers", "check(title, weight=1, bonus=False): a graded check")
    config.addinivalue_line("markers", "inputs(hidden, twin=None): a check on hidden inputs (grader.grading.hidden)")
    # python -m grader.grading.public_answers: the reference's key calls are recorded; python -m
    # grader.grading.secret: those on hidden inputs (the others are grader.grading.public_answers')
    if os.environ.get(key.RECORD_ENV):
        key.RECORDING = {}
        key.HIDDEN_ONLY["on"] = os.environ.get(INPUTS_ENV) == "hidden"
    state = {"events": None, "sessions": {}, "pristine": {}, "check": None}
    if config.getoption("--results-file", default=None):
        state["events"] = open(config.getoption("--results-file"), "a", encoding="utf-8", buffering=1)
    elif config.getoption("--events", default=False):
        state["key"] = sys.stdin.buffer.readline().strip()  # the grader's key for signing events, then nothing
        state["events"] = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        os.dup2(2, 1)  # pytest's own output goes to stderr; stdout carries only the events
        confine.not_dumpable()
    config.stash[_STATE] = state
    if config.getoption("--worker-template", default=None) is not None:
        template.adopt(config.getoption("--worker-template"))
    if config.getoption("--homework", default=None) and _live(config) is None:
        if config.getoption("--zygote", default=None):
            zygote.adopt(homeworks.load(config.getoption("--homework")), confine.namespaces_available(),
                         config.getoption("--zygote"))
        _prepare(config, config.getoption("--homework"))


def pytest_unconfigure(config):
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    for session in state["sessions"].values():
        session.close()
    state["sessions"].clear()
    zygote.shutdown()  # the zygotes that forked the workers
    if key.RECORDING is not None and os.environ.get(key.RECORD_ENV):
        Path(os.environ[key.RECORD_ENV]).write_text(json.dumps(key.RECORDING), encoding="utf-8")
    if state["events"] is not None:
        _emit(config, {"event": "finished"})
        state["events"].close()
        state["events"] = None


def _emit(config, record: dict) -> None:
    state = config.stash[_STATE]
    out = state["events"]
    if out is not None:
        out.write(events.line(state.get("key"), record))
        out.flush()


def _meta(item) -> dict:
    title, weight, bonus, subjects = _title(item)
    marker = item.get_closest_marker("check")
    kwargs = marker.kwargs if marker else {}
    inputs = _inputs(item)
    gate = kwargs.get("gate")
    return {"nodeid": item.nodeid, "name": item.name, "title": title, "weight": weight, "bonus": bonus,
            "subjects": list(subjects), "guard": bool(kwargs.get("guard", False)),
            # what opens the check's gates and what they are (grader.grading.checks.graded, grader.grading.runner.gated)
            "oracle": bool(kwargs.get("oracle", False)), "replays": [str(r) for r in kwargs.get("replays", ())],
            "gates": [str(gate)] if gate else list(subjects), **inputs}


def _inputs(item) -> dict:
    """What a check's inputs are (grader.grading.hidden; a check may carry several of its marks: grade_only and a
    case's): ``hidden`` (hidden inputs: its key runs live), ``twin`` (the public case it gates), ``grade_only``."""
    marks = [m.kwargs for m in item.iter_markers("inputs")]
    twin = next((m["twin"] for m in marks if m.get("twin")), None)
    return {"hidden": any(m.get("hidden") for m in marks), "twin": twin,
            "grade_only": any(m.get("grade_only") for m in marks)}


def _file(item) -> str:
    return item.nodeid.split("::")[0].rsplit("/", 1)[-1]


def _selected(item, names: list[str]) -> bool:
    return any(item.name == name or item.name.split("[")[0] == name for name in names)


_PLACE = pytest.StashKey[int]()


@pytest.hookimpl(trylast=True)  # after pytest's own ordering (fixtures.reorder_items): the order checks run in
def pytest_collection_modifyitems(session, config, items):
    """``--select``: every check of a file with a selection is reported (``part-checks``: what a part has, for the
    report of a partial run), the others deselected; a name matching no check is reported (``unknown-checks``) and
    nothing is graded. Then every check on hidden inputs is moved after every public one (:func:`_hidden_last`)."""
    _select(config, items)
    _hidden_last(items)


def _hidden_last(items) -> None:
    """Run the checks on hidden inputs (twins, grade-only checks, ``behaviour=True`` ones; grader.grading.hidden) after
    all the public checks of every part of this process, in their own workers (grader.boundary.session): whatever the
    student's code did on a hidden input, no public check runs after it. The results keep the test files' order
    (:func:`pytest_collection_finish`)."""
    for place, item in enumerate(items):
        item.stash[_PLACE] = place
    items.sort(key=lambda item: _inputs(item)["hidden"])  # a stable sort: each group keeps its order


def _select(config, items) -> None:
    _grade_only(config, items)
    wanted: dict[str, list[str]] = {}
    for value in config.getoption("--select", default=None) or []:
        file, _, name = value.partition("::")
        wanted.setdefault(file, []).append(name)
    if not wanted:
        return
    unknown = []
    for file, names in wanted.items():
        present = [item for item in items if _file(item) == file]
        _emit(config, {"event": "part-checks", "file": file, "items": [_meta(item) for item in present]})
        unknown += [f"{file}::{name}" for name in names if not any(_selected(item, [name]) for item in present)]
    keep = [] if unknown else [item for item in items
                               if _file(item) not in wanted or _selected(item, wanted[_file(item)])]
    if unknown:
        _emit(config, {"event": "unknown-checks", "names": unknown})
    dropped = [item for item in items if item not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def _grade_only(config, items) -> None:
    """On public inputs, the checks that run only in the grade (grader.grading.hidden.grade_only) are left out and
    named."""
    left = [item for item in items if _inputs(item)["grade_only"]]
    if not left or hidden_mode(Path(str(left[0].fspath)).parent):
        return
    _emit(config, {"event": "grade-only", "items": [_meta(item) for item in left]})
    config.hook.pytest_deselected(items=left)
    items[:] = [item for item in items if item not in left]


def pytest_collection_finish(session):
    items = []
    for item in sorted(session.items, key=lambda item: item.stash.get(_PLACE, 0)):  # as the test files have them
        items.append(_meta(item))
        module = getattr(item, "module", None)
        pristine = session.config.stash[_STATE]["pristine"]
        if module is not None and module.__name__ not in pristine:
            pristine[module.__name__] = _snapshot(module)
    _emit(session.config, {"event": "collected", "items": items})


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        _emit(collector.config, {"event": "collect-error", "text": report.longreprtext[-4000:]})


def pytest_sessionfinish(session):
    sessions = session.config.stash[_STATE]["sessions"]
    levels = sorted({s.level for s in sessions.values()})
    if levels:
        _emit(session.config, {"event": "confinement", "level": "; ".join(levels)})
    for (_, module), s in sessions.items():  # the worker's CPU time each part's calls used (grader.grading.budget)
        _emit(session.config, {"event": "part-cpu", "module": module, "seconds": round(s.spent, 3)})


# ---- the implementation under test ---------------------------------------------------------------------

def register_namespace(namespace: dict) -> str:
    """An ``--impl`` value that stands for a live namespace (a notebook's globals) in this process.

    For in-process runs only (``grader.notebook.check``); call :func:`forget_namespace` afterwards.
    """
    key = f"namespace:{len(_NAMESPACES)}:{id(namespace)}"
    _NAMESPACES[key] = NamespaceImplementation(namespace)
    return key


def forget_namespace(key: str) -> None:
    _NAMESPACES.pop(key, None)


def _source(spec: str, hw: homeworks.Homework) -> Path:
    if spec == "homework":
        return hw.homework_dir
    if spec == "solutions":
        return hw.solutions_dir
    return Path(spec)


def _session(config, hw_name: str, module: str) -> Session:
    """The worker of one part's module: each part's code runs in a worker of its own, with the part's time limit."""
    sessions = config.stash[_STATE]["sessions"]
    if (hw_name, module) not in sessions:
        hw = homeworks.load(hw_name)
        part = next((p for p in hw.parts if p.module == module), None)
        limit = config.getoption("--check-timeout") or (part.timeout if part else max(p.timeout for p in hw.parts))
        hints = dict(part.timeout_hints) if part else {}
        budget = part.budget(config.getoption("--check-timeout")) if part else None  # all the part's calls together
        sessions[hw_name, module] = Session(hw, _source(config.getoption("--impl"), hw), limit, hints, budget)
        if config.stash[_STATE]["check"] is not None:  # created by the fixture of the check now starting
            sessions[hw_name, module].begin_check(*config.stash[_STATE]["check"])
    return sessions[hw_name, module]


def _prepare(config, hw_name: str) -> None:
    """Start the workers of the parts whose test files are being run, while pytest collects the checks."""
    hw = homeworks.load(hw_name)
    named = {Path(str(arg).split("::")[0]).name for arg in config.args}
    for part in hw.parts:
        if part.tests in named and part.module not in _provided(hw):
            _session(config, hw_name, part.module).prepare()


def _provided(hw) -> set[str]:
    return set(provided_modules(hw))


def _kit_module(config, hw, name: str):
    kit = config.stash[_STATE].setdefault("kit", {})
    if name not in kit:
        kit[name] = import_provided(hw, name)
    return kit[name]


def _live(config):
    return _NAMESPACES.get(config.getoption("--impl", default=None))


def module_fixture(name: str):
    """A session fixture giving the module ``name`` of the implementation under test.

    In a homework's conftest (``tests/<hw>/conftest.py``): ``part = module_fixture("part")``; a graded test then
    takes ``part`` as an argument and never imports the module by name.
    """
    hw_name = Path(sys._getframe(1).f_globals["__file__"]).resolve().parent.name
    shared = str(homeworks.load(hw_name).shared_dir)  # the test environments the checks import by name
    if Path(shared).is_dir() and shared not in sys.path:
        sys.path.insert(0, shared)

    @pytest.fixture(scope="session", name=name)
    def _fixture(request):
        config = request.config
        live = _live(config)
        if live is not None:
            live.use_provided(set(homeworks.load(hw_name).modules), ROOT / "homework" / hw_name)
            return live.module(name)
        hw = homeworks.load(hw_name)
        if name in _provided(hw):  # the kit's own module, imported here: never a submission's copy
            return _kit_module(config, hw, name)
        session = _session(config, hw_name, name)
        try:
            return session.module(name)
        finally:
            if session.notes and not session.noted:
                session.noted = True
                _emit(config, {"event": "notes", "module": name, "lines": list(session.notes)})

    return _fixture


# ---- one check cannot change another: module data, global random state --------------------------------

_DATA = (list, dict, set, bytearray, np.ndarray)


def _snapshot(module) -> dict:
    """Deep copies of a test module's data: an argument the student's function changed is copied back into it."""
    saved = {}
    for name, value in vars(module).items():
        if isinstance(value, _DATA) and not name.startswith("_"):  # `_CACHE = {}` stays a cache across checks
            try:
                saved[name] = copy.deepcopy(value)
            except Exception:  # noqa: BLE001 - what cannot be copied cannot be restored either
                pass
    return saved


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before each check: the test module's data as written, and a seed of its own for the global generators
    (of the worker, and of this process), so a check gives the same result alone as in the whole run."""
    state = item.config.stash[_STATE]
    module = getattr(item, "module", None)
    for name, value in state["pristine"].get(getattr(module, "__name__", ""), {}).items():
        setattr(module, name, copy.deepcopy(value))
    seed = zlib.crc32(item.nodeid.encode("utf-8"))
    if state["events"] is not None:
        random.seed(seed)
        np.random.seed(seed)
    state["check"] = (item.nodeid, _title(item)[0], seed, _inputs(item)["hidden"])
    key.CURRENT.update(test=item.name, hidden=_inputs(item)["hidden"])
    for session in state["sessions"].values():
        session.begin_check(*state["check"])


_FAILURE = pytest.StashKey[tuple]()


# ---- titles and results -----------------------------------------------------------------------------------

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


_TITLE = pytest.StashKey[tuple]()


def _title(item) -> tuple[str, float, bool, tuple[str, ...]]:
    """(title, weight, bonus, subjects) of a check, worked out once and kept on the item."""
    if _TITLE not in item.stash:
        item.stash[_TITLE] = _work_out_title(item)
    return item.stash[_TITLE]


def _work_out_title(item) -> tuple[str, float, bool, tuple[str, ...]]:
    marker = item.get_closest_marker("check")
    if marker is None:
        doc = (getattr(item.obj, "__doc__", None) or "").strip().splitlines()
        return (doc[0] if doc else item.name), 1.0, False, ()
    template = marker.args[0] if marker.args else item.name
    params = dict(getattr(getattr(item, "callspec", None), "params", {}))
    shown = dict(params)
    marks = [m.kwargs for m in item.iter_markers("inputs")]
    for mark in marks:  # a hidden seed is a hidden number: no title tells it, its case's number tells them apart
        if mark.get("seed") in params:
            shown[mark["seed"]] = f"скрытый №{mark['case']}" if mark.get("case") else "скрытый"
    title = _PLACEHOLDER.sub(lambda m: _fill(m, shown), template)
    if any(m.get("twin") for m in marks) and title == _PLACEHOLDER.sub(lambda m: _fill(m, params), template):
        title += " — на скрытых входах"  # a twin whose title does not show its seed: never its public case's title
    subjects = tuple(_PLACEHOLDER.sub(lambda m: _fill(m, params), str(s)) for s in marker.kwargs.get("subject", ()))
    return title, float(marker.kwargs.get("weight", 1.0)), bool(marker.kwargs.get("bonus", False)), subjects


def _told_call(item, function: str, exc: BaseException | None = None) -> str:
    """The last call of ``function`` in the check now ending, and its answer, in words (grader.base.call_summary); an
    array answer that differs from the expected one is shown around its first differing item (``exc.differs``)."""
    for session in item.config.stash[_STATE]["sessions"].values():
        if function in session.check.calls:
            said, answer = session.check.calls[function]
            differs = getattr(exc, "differs", None)
            raw = session.check.answers.get(function)
            if differs and isinstance(raw, np.ndarray) and raw.shape == differs[0]:
                answer = call_summary.value(raw, at=differs[1])
            return f"Вызов: {said}\nОтвет: {answer if answer is not None else 'нет (вызов не вернул значения)'}"
    return ""


def _subject(exc: BaseException | None, subjects: tuple[str, ...]) -> str:
    """The function a check's result is about: of its subjects, the one whose call or comparison failed (an
    exception's ``function``), else the first; never a function the check called only to explain a failure."""
    named = getattr(exc, "function", None)
    return named if named in subjects else (subjects[0] if subjects else "")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and report.failed and _FAILURE not in item.stash:
        exc = call.excinfo.value
        mutated = [m for session in item.config.stash[_STATE]["sessions"].values() for m in session.check.mutated]
        kind, message = explain(exc, _live(item.config), mutated)
        subject = _subject(exc, _title(item)[3])
        # for an error in the student's code, the call and the student's own traceback from the worker; for a wrong
        # or unreadable answer, the call that gave it (never the frames of pytest or the grader); the check's
        # traceback when it made no call
        if isinstance(exc, RemoteError):  # the call that raised, then where in the student's code
            said = _told_call(item, subject).split("\n")[0]
            trace = "\n".join(filter(None, [said, str(exc.info.get("traceback", ""))]))
        else:
            trace = _told_call(item, subject, exc) or ("" if isinstance(exc, CheckFailure) else report.longreprtext)
        # the typical mistake the check named: a field the check's helpers set (grader.grading.checks), never read
        # from text
        diagnosis = exc.diagnosis if isinstance(exc, CheckFailure) and isinstance(exc.diagnosis, str) else ""
        item.stash[_FAILURE] = (kind, message, str(trace), subject, getattr(exc, "defer", None) or {}, diagnosis)
        if item.config.stash[_STATE]["events"] is None and isinstance(exc, RemoteError):
            # plain pytest, as a student may run it: the explanation and the student's own lines, not the proxy's
            report.longrepr = message + "\n\n" + printable(str(trace), keep="\n")
    if call.when == "teardown":
        state = item.config.stash[_STATE]
        functions, entered = [], {}
        for session in state["sessions"].values():
            called, went = session.end_check()
            functions += called
            entered.update(went)
        live = _live(item.config)
        if live is not None:  # the in-notebook self-check: the notebook's functions, traced in this process
            entered.update(live.entered.calls)
            live.entered.clear()
        title, weight, bonus, subjects = _title(item)
        failure = item.stash.get(_FAILURE, None)
        _emit(item.config, {
            "event": "result", "nodeid": item.nodeid, "name": item.name, "title": title, "weight": weight,
            "bonus": bonus, "outcome": "failed" if failure else "passed", "kind": failure[0] if failure else "",
            "message": failure[1] if failure else "", "traceback": failure[2] if failure else "",
            "functions": functions, "subject": failure[3] if failure else _subject(None, subjects),
            "entered": entered, "defer": failure[4] if failure else {}, "diagnosis": failure[5] if failure else "",
        })
