"""The implementation under test for one pytest session, as the checking process sees it.

A graded test gets the part's module as a proxy (:mod:`proxy`); ``module.f(...)`` becomes :meth:`Session.call`,
which asks the session's worker (:mod:`link`) and judges its answer (:mod:`replies`): plain data rebuilt as exact
types, so no returned object can run code here. A call that runs past the check's time limit, kills its worker
or answers with something else fails the check that made it; the next call gets a fresh worker, which loads the
modules again. A check on hidden inputs (grader.grading.hidden) asks a worker of another link, which serves no public
check: nothing the student's code saw of a hidden input reaches a public check's text. What this class accepts from
the worker is what :mod:`link` and :mod:`replies` accept: the names a module defines (strings), its notes (strings),
and answers.
"""
from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from grader.base import call_summary
from grader.base.escape import one_line
from grader.base.homeworks import Homework
from grader.boundary import errors, replies
from grader.boundary.confine import WALL_FACTOR
from grader.boundary.errors import BadAnswer, CallTimeout, HungFunction, RemoteError, WorkerCrashed, remote_error
from grader.boundary.link import Link
from grader.boundary.loading import MissingFunction, ModuleLoadError
from grader.boundary.proxy import RemoteModule
from grader.boundary.staging import provided_modules

OVERRUN = 0.25  # s of CPU time past the check's limit that the clock's granularity may show


@dataclass
class _Check:
    nodeid: str = ""
    title: str = ""
    seed: int | None = None
    hidden: bool = False  # a check on hidden inputs: its calls go to the hidden checks' worker
    deadline: float = float("inf")  # wall-clock: the backstop for code that waits
    cpu_left: float = float("inf")  # the worker's CPU time the check may still use
    functions: list[str] = field(default_factory=list)
    # function called -> the student's other functions that call went through, as the worker says (feedback only:
    # "gae calls td_errors")
    entered: dict[str, list[str]] = field(default_factory=dict)
    mutated: list[tuple[str, str]] = field(default_factory=list)  # (function, parameter) it changed in place
    # function -> its last call in the check but a probe's, told in words: (the call, the answer; None: none came)
    calls: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    answers: dict[str, object] = field(default_factory=dict)  # function -> the answer of that call (plain data)


@dataclass
class _Loaded:
    callables: frozenset
    notes: list[str]


class Session:
    """The submission under test in one pytest session: its worker, and the bookkeeping of modules that did not
    load and functions that hung."""

    def __init__(self, hw: Homework, source: Path, limit: float, timeout_hints: dict[str, str] | None = None,
                 budget: float | None = None):
        self.hw, self.source, self.limit = hw, Path(source).resolve(), float(limit)
        self.folder = self.source.parent if self.source.is_file() else self.source  # the student's, as they name it
        self.timeout_hints = timeout_hints or {}  # function -> what to look at when it runs past the limit
        self.provided = provided_modules(hw)
        self.kit = set(self.provided) | {p.stem for p in (*hw.tests_dir.glob("*.py"), *hw.shared_dir.glob("*.py"))}
        # the run's marker (the grader reaps the whole run by it) and this session's own under it: a worker
        # discarded here (a hang) never takes another part's worker with it
        token = f"{os.environ.get('HWKIT_RUN_TOKEN') or uuid.uuid4().hex}.{uuid.uuid4().hex[:12]}"
        self.token = token
        self.link = Link(hw, self.source, token, self.provided, sorted(self.kit))  # the public checks' worker
        self.hidden_link: Link | None = None  # the hidden checks' worker: started at the first hidden check
        self.load_errors: dict[tuple[bool, str], ModuleLoadError] = {}  # (hidden, module) -> why it did not load
        self.hung: dict[tuple[str, str], str] = {}  # (module, function) -> title of the check it hung in
        self.notes: list[str] = []
        self.noted = False  # the notes were reported
        self.check = _Check()
        # the wall-clock time the part's calls may spend waiting (sleeping, blocked: neither on a CPU nor queued for
        # one; a machine busy with others costs nothing of it)
        self.slack = self.limit * WALL_FACTOR
        self.owed = 0.0  # CPU time used outside a check (a module's import), charged to the next check
        # the worker's CPU time all the part's calls together may use (hidden checks included: they run in this
        # session), and what they used: past it, the part's remaining calls fail at once. A call that ran past
        # its own limit is not charged: it already costs its function every later call (``hung``)
        self.budget = float(budget) if budget else float("inf")
        self.spent = 0.0

    @property
    def level(self) -> str:
        """The confinement the worker reported (the scoreboard shows it)."""
        return self.link.level

    @property
    def confined(self) -> bool:
        return self.link.confined

    @property
    def tmp(self) -> Path:
        return self.link.tmp

    def prepare(self) -> None:
        self.link.prepare()

    def begin_check(self, nodeid: str, title: str, seed: int, hidden: bool = False) -> None:
        self.check = _Check(nodeid, title, seed, bool(hidden), time.monotonic() + self.limit * WALL_FACTOR,
                            self.limit - self.owed)
        self.owed = 0.0

    def _link(self) -> Link:
        """The worker of the check now running: the public checks' link, or for a check on hidden inputs the hidden
        checks' own (grader.grading.plugin runs every hidden check after every public one)."""
        if not self.check.hidden:
            return self.link
        if self.hidden_link is None:
            self.hidden_link = Link(self.hw, self.source, self.token, self.provided, sorted(self.kit), hidden=True)
        return self.hidden_link

    def end_check(self) -> tuple[list[str], dict[str, list[str]]]:
        """(the functions the check called, the student's functions those calls went through)."""
        check, self.check = self.check, _Check()
        return check.functions, check.entered

    def close(self) -> None:
        self.link.close()
        if self.hidden_link is not None:
            self.hidden_link.close()

    def module(self, name: str) -> RemoteModule:
        """What a test's module fixture gets: a proxy of the student's module, loaded in the worker."""
        self.load(name)
        return RemoteModule(self, name)

    def load(self, name: str) -> _Loaded:
        hidden, link = self.check.hidden, self._link()
        if (hidden, name) in self.load_errors:
            raise self.load_errors[hidden, name]
        link.start()
        if name in link.loaded:
            return link.loaded[name]
        try:
            wall = self.limit * WALL_FACTOR if link.measures_cpu else self.limit
            started = time.monotonic()
            answer = link.ask(("load", name, (self.limit, wall)), wall, self.limit, self.slack)
            self._spend(link, started)
        except TimeoutError:
            where = link.where(None)
            link.discard()
            error = errors.load_timed_out(name, self.limit, where)
        except WorkerCrashed as exc:
            error = errors.load_crashed(name, exc)
        else:
            if replies.shape(answer, "loaded", 3) and all(type(c) is str for c in answer[1]):
                info = _Loaded(frozenset(answer[1]), [str(n) for n in answer[2]])
                link.loaded[name] = info
                if not hidden:  # the notes are reported once, from the public worker: never a hidden worker's text
                    self.notes += [n for n in info.notes if n not in self.notes]
                return info
            readable = replies.shape(answer, "load-error", 2) and type(answer[1]) is str
            text = answer[1] if readable else "ответ не читается"  # the student's folder, not the scratch copy
            text = text.replace(str(link.scratch), str(self.folder))
            error = ModuleLoadError(one_line(text, 1000))  # the worker's text: one line, whatever it sent
        self.load_errors[hidden, name] = error
        raise error

    def call(self, module: str, function: str, args: tuple, kwargs: dict, repeat: int = 0, track: bool = True):
        """``function(*args, **kwargs)`` in the worker; an exception it ends with names the function
        (``.function``: in a check of several functions, the one whose call failed)."""
        try:
            return self._call(module, function, args, kwargs, repeat, track)
        except (HungFunction, MissingFunction, CallTimeout, WorkerCrashed, BadAnswer, RemoteError) as exc:
            exc.function = function
            raise

    def _call(self, module: str, function: str, args: tuple, kwargs: dict, repeat: int, track: bool):
        if self.spent >= self.budget:
            raise errors.budget_spent(function, self.budget, self.limit)
        if (module, function) in self.hung:
            raise errors.hung(function, self.hung[module, function], self.limit)
        info = self.load(module)
        link = self._link()
        if function not in info.callables:
            raise errors.missing(self.source, module, function)
        if function not in self.check.functions:
            self.check.functions.append(function)
        seed, self.check.seed = self.check.seed, None
        started = time.monotonic()
        left = self.budget - self.spent
        by_budget = left < min(self.check.cpu_left, self.limit)  # the part's budget ends the call before its limit
        cpu = max(min(self.check.cpu_left, self.limit, left), 0.05)
        if link.measures_cpu:  # the limit is CPU time; a backstop per check; waiting, a budget per part
            wall = self.check.deadline - started if self.check.nodeid else self.limit * WALL_FACTOR
        else:  # where the worker's CPU time is not known, the limit is wall-clock time
            wall = cpu
        wall = max(wall, 0.05)
        request = ("call", module, function, tuple(args), dict(kwargs), seed, (cpu, wall), int(repeat), bool(track))
        # a probe's call, looking for the cause of a failure, is not the call a failure tells of
        told = not call_summary.PROBING[0]
        if told:  # told before the call: a call that crashes or runs out of time is told too
            said = call_summary.call(function, args, kwargs) + (f" — {repeat} раз" if repeat else "")
            self.check.calls[function] = (said, None)
            self.check.answers.pop(function, None)
        try:
            answer = link.ask(request, wall, cpu, self.slack)
            self._spend(link, started)
            if link.measures_cpu and self.check.cpu_left < -OVERRUN:  # CPU used off the call came due
                raise TimeoutError
        except TimeoutError:
            where = link.where(function)
            went = self.check.entered.setdefault(function, [])
            went += [f for f in link.entered() if f not in went]
            link.discard()
            if by_budget:
                self.spent = self.budget
                raise errors.budget_spent(function, self.budget, self.limit, ran=True) from None
            self.hung[module, function] = self.check.title or function
            raise errors.timed_out(function, self.limit, where, self.timeout_hints.get(function)) from None
        except WorkerCrashed as exc:
            raise errors.crashed(function, exc) from None
        value = self._answer(link, answer, function, args, kwargs, track)
        if told:
            self.check.calls[function] = (said, call_summary.value(value))
            self.check.answers[function] = value  # -v may show it again around the item that differs
        return value

    def _spend(self, link: Link, started: float) -> None:
        """Charge what the last request cost: its CPU time to the check (to the next check, when it came outside
        one: a module's import) and to the part's budget, its waiting (neither on a CPU nor queued for one) to
        the part's budget of waiting."""
        self.spent += link.meter.used
        if self.check.nodeid:
            self.check.cpu_left -= link.meter.used
        else:
            self.owed += link.meter.used
        waited = time.monotonic() - started - link.meter.used - link.meter.queued
        self.slack = max(self.slack - max(waited, 0.0), 0.0)

    def _answer(self, link: Link, answer, function: str, args: tuple, kwargs: dict, track: bool):
        try:
            kind, value, sync = replies.unpack(answer, function, replies.tracked(args, kwargs, self.kit) if track
                                               else set())
        except WorkerCrashed:
            link.discard()
            raise
        changed = replies.apply(sync, args, kwargs, function)
        went = self.check.entered.setdefault(function, [])
        went += [f for f in replies.entered(sync) if f not in went]
        names = sync.get("names") if type(sync.get("names")) is dict else {}
        self.check.mutated += [(function, str(names.get(k, k))) for k in changed]
        if kind == "return":
            return value
        if kind == "unsendable":
            raise BadAnswer(f"{function} вернула {one_line(value, 300)}. Проверка принимает только числа, "
                            "строки, None, списки, кортежи, словари и np.ndarray из чисел: верните np.ndarray / float.")
        if type(value.get("traceback")) is str:  # the student's files by their own path, not the scratch copy's
            value["traceback"] = value["traceback"].replace(str(link.scratch) + os.sep, str(self.folder) + os.sep)
        raise remote_error(value, function)
