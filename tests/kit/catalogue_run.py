"""One process that grades a part's reference and then several mutants of it (started by tests/kit/catalogue.py).

A student's run starts a checking process and a zygote for each grading; the catalogue grades about two hundred
implementations, so this process runs the part's graded checks as one pytest session per grading, one after
another, with one zygote for all of them: the reference's a session of its own, each mutant's a fork of one
session that collected the part's checks once (``Template``). Each implementation's code still runs in confined
workers, with the part's time limits, exactly as ``check.py HW PART`` grades it.

A mutant is graded on the checks whose verdict it can change, and only as far as its feedback's first block needs:
- A check whose calls (as the reference's grading records them) reach no function the mutant changes runs the
  reference's code on the check's own inputs, so it keeps the reference's verdict. Changed: what the mutant
  defines or assigns, and every function naming one of those (``reach``); a check that recorded no call (it reads
  a run a module fixture made earlier) always runs, and so does every check of a mutant with other top-level code.
- The feedback opens with the failed subject first in the module's order (callees first): the checks about later
  functions run only when none up to the first changed one failed (``plan``), or when a guard check's count
  (grader.grading.runner.guarded, applied to the whole part here) still depends on them.
- Within a run, the session ends once the first block is settled (``FirstBlock``): the first group (the failed
  subject first in the module's order) is led by a named typical mistake, which no later check of the group can
  displace (a group's lead is its first failure of the lowest rank, grader.reporting.feedback.lead_rank), whether the
  group has other failures is known (the block says so), and no check still to run is about a function before it. The
  checks not run are left out, as those of the second stage are.
- A call of a function the mutant does not change, on the arguments the reference's grading called it with, gets
  the reference's answer (``Memo``), when that call changed none of the test's objects: the 3 s of SARSA training
  a check of Q-learning also compares against are not paid again for each mutant of Q-learning. The reference's
  functions are deterministic given their arguments (their randomness comes from the generator or seed passed).
The kit's tests grade a few mutants on every check, every call made for real, as well and compare (``"whole":
true``): every verdict and message kept or computed, and the first block of the feedback, must be the same. A job
with ``"every": true`` grades each mutant on every check it can change, past the first block (no ``FirstBlock``, no
second stage left out): every name any block prints.

Usage: ``python catalogue_run.py JOB.json OUT.json``; JOB holds the homework, the part, the reference's folder and
the mutants (``{"path", "folder", "whole"}``); OUT gets each implementation's check records (grader.base.results).
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import gc
import io
import json
import os
import pickle
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from grader.base import homeworks  # noqa: E402
from grader.base.results import CheckResult  # noqa: E402
from grader.boundary import replies, zygote  # noqa: E402
from grader.boundary.session import Session  # noqa: E402
from grader.boundary.staging import provided_modules  # noqa: E402
from grader.grading import plugin  # noqa: E402
from grader.grading.runner import PYTEST_FLAGS, Reader, check_results, guarded  # noqa: E402
from grader.reporting import feedback  # noqa: E402


class Memo:
    """The answers of the reference's calls that changed none of the test's objects, and, while a mutant is graded,
    those answers for its calls of the functions it does not change.

    A call is known by its arguments, with one thing left out: the generator of each space of the kit's environments
    (``np_random``: it starts from the operating system's entropy, as Gymnasium's does, and only ``sample()`` reads
    it). The reference's code never calls ``sample`` (``reads_spaces`` would say so, and then nothing is left out),
    so its answer does not depend on it.
    """

    def __init__(self, kit: set[str], solution: str):
        self.kit = kit
        self.whole_state = reads_spaces(solution)
        self.answers: dict[bytes, bytes] = {}
        self.used = 0  # calls answered here
        self.recording = False  # the reference is being graded
        self.unchanged: set[str] | None = None  # the functions of the module the mutant graded now leaves as they are
        real = Session.call

        def call(session, module, function, args, kwargs, repeat=0, track=True):
            # the key (and the arguments' fingerprints) only where it is used: a call the reference makes now, or a
            # call of a function the mutant leaves as it is (pickling a batch of episodes costs more than the call)
            known = self.unchanged is not None and function in self.unchanged
            key = self._key(module, function, args, kwargs, repeat, track) if known or self.recording else None
            if key is not None and known and key in self.answers:
                session.load(module)
                self.used += 1
                if function not in session.check.functions:
                    session.check.functions.append(function)
                value, entered = pickle.loads(self.answers[key])
                went = session.check.entered.setdefault(function, [])
                went += [f for f in entered if f not in went]
                return value
            before = [replies.fingerprint(v) for v in (*args, *kwargs.values())] if self.recording else None
            value = real(session, module, function, args, kwargs, repeat, track)
            if self.recording and key is not None \
                    and before == [replies.fingerprint(v) for v in (*args, *kwargs.values())]:
                entered = list(session.check.entered.get(function, []))  # what the reference's call went through
                self.answers[key] = pickle.dumps((value, entered), protocol=pickle.HIGHEST_PROTOCOL)
            return value

        Session.call = call

    def _key(self, *call) -> bytes | None:
        try:
            return pickle.dumps(call if self.whole_state else self._form(call), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - what cannot be a key is not remembered
            return None

    def _form(self, value, depth: int = 0):
        if depth > 20:
            raise ValueError("too deep")
        if type(value).__module__ in self.kit and hasattr(value, "__dict__"):
            return (type(value).__module__, type(value).__qualname__,
                    {k: self._form(v, depth + 1) for k, v in sorted(vars(value).items())
                     if not (k == "np_random" and isinstance(v, np.random.Generator))})
        if type(value) in (list, tuple):
            return type(value)(self._form(v, depth + 1) for v in value)
        if type(value) is dict:
            return {k: self._form(v, depth + 1) for k, v in value.items()}
        return value


def reads_spaces(solution: str) -> bool:
    """Whether the module's code may read an environment's own generator (``np_random``, ``sample``, ``seed``)."""
    return any(isinstance(n, ast.Attribute) and n.attr in ("np_random", "sample", "seed")
               for n in ast.walk(ast.parse(solution)))


class FirstBlock:
    """A plugin of a mutant's pytest session that ends it once the feedback's first block is settled.

    The first block is the lead of the first group: of the failed checks, those about the subject first in
    ``order``; its lead is the first of them (in the test file's order) of the lowest ``feedback.lead_rank``. Once
    that is a named mistake (rank 0), a later check of the group cannot displace it; the block also says whether the
    group has other failures, known after a second one or when no check to come is about the group's function; a
    later check about a function before it could open a group of its own, so the session ends only when none is
    left (a check without subjects could be about anything: it keeps the session going). ``ran``: the checks that
    got a verdict.
    """

    def __init__(self, order: list[str]):
        self.order = order
        self.rank = {f: i for i, f in enumerate(order)}
        self.failed: list[tuple[int, int]] = []  # (the group's place in the order, the failure's lead rank)
        self.ran: set[str] = set()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        yield
        self.ran.add(item.nodeid)
        failure = item.stash.get(plugin._FAILURE, None)
        if failure is None:
            return
        kind, message, _, subject, defer, diagnosis = failure
        c = CheckResult(item.nodeid, item.name, "", "failed", kind, message, subject=subject, diagnosis=diagnosis)
        if kind in ("load", "todo"):  # told as one line per message, before any group: never settled here
            self.failed.append((-1, 5))
            return
        # a failure whose hint sends the student to other checks leads no group that holds one of those
        self.failed.append((self.rank.get(feedback.subject(c, self.order), len(self.order)),
                            5 if defer else feedback.lead_rank(c)))
        group = min(g for g, _ in self.failed)
        if group < 0 or group >= len(self.order) or min(r for g, r in self.failed if g == group) != 0:
            return
        later = [[self.rank.get(f, -1) for f in plugin._title(x)[3]] or [-1]
                 for x in item.session.items[item.session.items.index(item) + 1:]]
        # the block also says whether the group has other failures: settled by a second one, or by none to come
        others = sum(g == group for g, _ in self.failed) > 1 or not any(group in ranks for ranks in later)
        if others and all(min(ranks) >= group for ranks in later):
            # the session ends after this check: pytest's run loop walks session.items, cut here (``shouldstop``
            # would end it by an Interrupted, whose report renders the source of every frame: ~0.1 CPU-s a mutant)
            del item.session.items[item.session.items.index(item) + 1:]


def session_args(hw, part, folder: str, events: Path) -> list[str]:
    """pytest's arguments for a session grading the modules in ``folder`` on the part's checks, its events written to
    ``events`` (a grading of selected checks: ``Template``)."""
    return [str(hw.tests_dir / part.tests), f"--impl={folder}", f"--results-file={events}", f"--homework={hw.name}",
            *PYTEST_FLAGS, "-p", "no:faulthandler", "--capture=sys"]


def run_session(args: list[str], plugins: list, cwd: str) -> None:
    """pytest.main, its output discarded, in ``cwd``."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        os.chdir(cwd)
        try:
            pytest.main(args, plugins=plugins)
        finally:
            os.chdir(ROOT)


def records_of(events: Path, stopper: FirstBlock | None) -> list[dict]:
    """A session's check records, from its events; those it ran, when its FirstBlock ended it early."""
    checks = check_results(Reader(events).read(), guard=False)  # guards: on the whole part
    if stopper is not None and stopper.failed:
        checks = [c for c in checks if c.nodeid in stopper.ran]
    return [dataclasses.asdict(c) for c in checks]


def grade(hw, part, folder: str) -> list[dict]:
    """The part's checks on the modules in ``folder``, in a pytest session of its own here (the reference's: the
    ``Memo`` records its answers in this process)."""
    with tempfile.TemporaryDirectory(prefix="hwcat-") as tmp:
        events = Path(tmp) / "events.jsonl"
        events.touch()
        run_session(session_args(hw, part, folder, events), [], tmp)
        return records_of(events, None)


def session(folder: str, select: list[str] | None = None, order: list[str] | None = None):
    """A grading, as a step of the generator the ``Template`` runs: the checks (the ``select``\\ ed ones) on the
    modules in ``folder``; with ``order`` (the module's functions in the report's order), only as far as the first
    block needs (:class:`FirstBlock`). ``records = yield from session(...)``."""
    return (yield folder, select, order)


class Template:
    """A plugin of the one pytest session that collects the part's checks for every grading of mutants (``steps``: a
    generator that yields a grading's (folder, select, order) and is sent its records).

    A pytest session of its own for each grading paid pytest's configuration, its plugins' set-up and the collection
    of the part's checks again each time (about 0.1 CPU-s, some 600 times a run of the catalogue). This session stops
    when its collection is done, runs no check, and forks for each grading. The child takes the grading's options
    (``--impl``, ``--results-file``, ``--select``), drops the template's Session (the plugin's, never started) and
    prepares its own as the plugin's configuration does, runs again on the checks as collected the hooks that select
    and order them and report them (grader.grading.plugin's ``--select``, the run order, the ``collected`` event), as a
    session of its own does, registers its ``FirstBlock``, and lets pytest's own run loop run them and end the
    session (the plugin's ``finished`` event): its worker, the part's limits, the same events. The template ran no
    check, so no fixture's value, worker or check's state is handed down; the child writes its records and exits.
    """

    def __init__(self, hw, part, steps, memo: Memo):
        self.hw, self.part, self.steps, self.memo = hw, part, steps, memo
        self.collected: list | None = None  # the checks as collected, before any plugin selects or orders them
        self.child: tuple[Path, FirstBlock | None] | None = None  # in a fork: its folder and its FirstBlock
        self.error: BaseException | None = None  # raised by ``steps``: raised again once the session is over

    def run(self) -> None:
        with tempfile.TemporaryDirectory(prefix="hwcat-") as tmp:
            events = Path(tmp) / "events.jsonl"
            events.touch()
            run_session(session_args(self.hw, self.part, str(self.hw.solutions_dir), events), [self], tmp)
            if self.child is not None:  # a fork whose grading's session is over
                self._report()
        if self.error is not None:
            raise self.error

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection_modifyitems(self, items):
        if self.collected is None:
            self.collected = list(items)
        yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        records = None
        while True:
            try:
                folder, select, order = self.steps.send(records)
                tmp = Path(tempfile.mkdtemp(prefix="hwcat-"))
                gc.freeze()  # the collector never walks this process's objects in the fork: it copies no page of them
                pid = os.fork()
            except StopIteration:
                return True
            except BaseException as exc:  # noqa: BLE001 - pytest would take it for its own internal error
                self.error = exc
                return True
            if pid == 0:
                try:
                    self._become(session, folder, select, order, tmp)
                except BaseException:  # noqa: BLE001 - told to the template
                    (tmp / "error.txt").write_text(traceback.format_exc(), encoding="utf-8")
                    os._exit(1)
                return None  # pytest's own run loop runs the grading's checks
            try:
                records = self._records(pid, tmp)
            except BaseException as exc:  # noqa: BLE001 - as above
                self.error = exc
                return True

    def _become(self, session, folder: str, select: list[str] | None, order: list[str] | None, tmp: Path) -> None:
        """In the fork: the session of one grading, as far as pytest's configuration and collection make it."""
        os.chdir(tmp)
        config = session.config
        events = tmp / "events.jsonl"
        events.touch()
        state = config.stash[plugin._STATE]
        state["events"] = open(events, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - the plugin closes it
        config.option.impl, config.option.results_file = folder, str(events)
        config.option.select = [f"{self.part.tests}::{name}" for name in select or []]
        state["sessions"].clear()
        plugin._prepare(config, self.hw.name)
        stopper = FirstBlock(order) if order is not None else None
        if stopper is not None:
            config.pluginmanager.register(stopper)
        items = list(self.collected)
        config.hook.pytest_collection_modifyitems(session=session, config=config, items=items)
        session.items = items
        config.hook.pytest_collection_finish(session=session)
        session.testscollected = len(items)
        self.child = tmp, stopper

    def _report(self) -> None:
        """In the fork, its session over: its records (and the calls the memo answered) for the template; exit."""
        tmp, stopper = self.child
        code = 1
        try:
            found = {"records": records_of(tmp / "events.jsonl", stopper), "used": self.memo.used}
            (tmp / "records.json").write_text(json.dumps(found), encoding="utf-8")
            code = 0
        except BaseException:  # noqa: BLE001 - told to the template
            (tmp / "error.txt").write_text(traceback.format_exc(), encoding="utf-8")
        finally:
            os._exit(code)

    def _records(self, pid: int, tmp: Path) -> list[dict]:
        try:
            _, status = os.waitpid(pid, 0)
            result = tmp / "records.json"
            if os.waitstatus_to_exitcode(status) != 0 or not result.is_file():
                error = tmp / "error.txt"
                raise RuntimeError(f"a grading's session (a fork of the template) ended with status {status}:\n"
                                   + (error.read_text(encoding="utf-8") if error.is_file() else ""))
            found = json.loads(result.read_text(encoding="utf-8"))
            self.memo.used = found["used"]
            return found["records"]
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def reach(solution: str, mutant: str) -> set[str] | None:
    """The functions of the module whose behaviour the mutant may change (None: any of them).

    Changed: a function the mutant defines, a module-level name it assigns without calling anything (``NAMED_BY``,
    a constant), and every function that names a changed one, directly or through others. Any other top-level code
    of its own (a call, a class) may change anything.
    """
    base, extra = ast.parse(solution), ast.parse(mutant)
    imports = {ast.dump(n) for n in base.body if isinstance(n, (ast.Import, ast.ImportFrom))}
    changed: set[str] = set()
    for node in extra.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            changed.add(node.name)
        elif isinstance(node, ast.Assign) and not any(isinstance(n, ast.Call) for n in ast.walk(node.value)) \
                and all(isinstance(n, (ast.Name, ast.Tuple)) for t in node.targets for n in ast.walk(t)
                        if not isinstance(n, ast.expr_context)):
            changed |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and ast.dump(node) in imports:
            continue
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):  # a docstring
            return None
    defs = {n.name: _loads(n) for n in base.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    defs.update({n.name: _loads(n) for n in extra.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))})
    grown = True
    while grown:
        more = {f for f, names in defs.items() if names & changed} - changed
        changed |= more
        grown = bool(more)
    return changed


def plan(reference: list[dict], changed: set[str] | None, order: list[str]) -> tuple[list[str], list[str], int] | None:
    """The checks to run, in two stages, and where the feedback can begin (None: every check, at once).

    Only a check that reaches a changed function can fail. The feedback opens with the failed subject that comes
    first in the module's order (callees first, grader.reporting.feedback.function_order), so it can begin no earlier
    than the changed subject first in that order. The first stage runs the reaching checks whose subjects include a
    function up to that one; when one of them fails with a subject up to it, no other check can come before it in the
    feedback, and the second stage (the other reaching checks) is not run.
    """
    if changed is None:
        return None
    rank = {f: i for i, f in enumerate(order)}
    subjects = {f for c in reference for f in c["subjects"]}  # a helper no check is about heads no group
    begin = min((rank[f] for f in changed & subjects if f in rank), default=len(order))
    can_fail = [c for c in reference if not c["functions"] or set(c["functions"]) & changed or c["outcome"] != "passed"]
    early = [c["name"] for c in can_fail if min(rank.get(f, -1) for f in c["subjects"] or [""]) <= begin]
    return early, [c["name"] for c in can_fail if c["name"] not in early], begin


def grade_mutant(reference: list[dict], staged, order: list[str], folder: str, every: bool = False):
    """The mutant's check records: those run, and the reference's for the checks that cannot fail; ``every``: every
    check that can fail is run, past the first block too. A generator of gradings (:func:`session`)."""
    rank = {f: i for i, f in enumerate(order)}
    if staged is None:
        return _guarded((yield from session(folder)))
    early, late, begin = staged
    if every:
        run = {c["name"]: c for c in ((yield from session(folder, early + late)) if early + late else [])}
        return _guarded([run.get(c["name"], c) for c in reference])
    run = {c["name"]: c for c in ((yield from session(folder, early, order)) if early else [])}
    failed = [rank.get(c["subject"], -1) for c in run.values() if c["outcome"] != "passed"]
    if late and not (failed and min(failed) <= begin and _guards_settled(reference, run, set(late))):
        run.update({c["name"]: c for c in (yield from session(folder, late))})
    skipped = set(early + late) - set(run)  # could fail, but come after the first failed function: not run
    return _guarded([run.get(c["name"], c) for c in reference if c["name"] not in skipped])


def _guards_settled(reference: list[dict], run: dict[str, dict], late: set[str]) -> bool:
    """Whether every guard check's count is known without the late checks: a behaviour check of its functions
    already passed (run now, or one that cannot fail), or none of them is late."""
    known = [run.get(c["name"], c) for c in reference if c["name"] not in late]
    for g in (c for c in known if c["guard"]):
        partners = [c for c in reference if not c["guard"] and set(c["subjects"]) & set(g["subjects"])]
        passed = any(run.get(c["name"], c)["outcome"] == "passed" for c in partners if c["name"] not in late)
        if not passed and any(c["name"] in late for c in partners):
            return False
    return True


def _guarded(records: list[dict]) -> list[dict]:
    return [dataclasses.asdict(c) for c in guarded([CheckResult(**r) for r in records])]


def gradings(job: dict, solution: str, reference: list[dict], order: list[str], memo: Memo, out: dict):
    """The job's gradings of mutants, one after another (a generator of :func:`session` steps); ``out`` gets each
    mutant's records."""
    functions = {n.name for n in ast.parse(solution).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for mutant in job["mutants"]:
        changed = reach(solution, Path(mutant["path"]).read_text(encoding="utf-8"))
        staged = plan(reference, changed, order)
        memo.unchanged, memo.used = (None if changed is None else functions - changed), 0
        checks = yield from grade_mutant(reference, staged, order, mutant["folder"], every=job.get("every", False))
        out[mutant["path"]] = {"checks": checks}
        memo.unchanged = None  # graded on every check: every call made for real
        if mutant.get("whole") and staged is not None:
            whole = _guarded((yield from session(mutant["folder"])))
            out[mutant["path"]].update(whole=whole, remembered=memo.used)


def main(job_file: str, out_file: str) -> None:
    job = json.loads(Path(job_file).read_text(encoding="utf-8"))
    hw = homeworks.load(job["homework"])
    part = hw.part(job["part"])
    solution = (hw.solutions_dir / f"{part.module}.py").read_text(encoding="utf-8")
    order = feedback.function_order(hw, part)
    kit = set(provided_modules(hw)) | {p.stem for p in (*hw.tests_dir.glob("*.py"), *hw.shared_dir.glob("*.py"))}
    out, memo = {}, Memo(kit, solution)
    with zygote.kept():
        memo.recording = True
        reference = _guarded(grade(hw, part, str(hw.solutions_dir)))
        memo.recording = False
        if any(c["outcome"] != "passed" for c in reference):  # every mutant's verdicts rest on the reference's
            raise SystemExit(f"the reference fails checks of {part.id}: "
                             + "; ".join(f"{c['name']}: {c['message'][:200]}" for c in reference
                                         if c["outcome"] != "passed"))
        if job["mutants"]:
            Template(hw, part, gradings(job, solution, reference, order, memo, out), memo).run()
    Path(out_file).write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:3])
