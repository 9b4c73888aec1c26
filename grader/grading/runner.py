"""Running graded checks: a pytest process that decides, workers that run the student's code.

The grader's command line starts ``python -m pytest <the parts' test files> --impl ... --events``: the graded
suite with the plugin (grader/grading/plugin.py), which never imports the student's code but calls it in a worker
process (grader/boundary/session.py). The pytest process writes one JSON line per event to its standard output; this
module reads them. It trusts what it reads because no student code runs in that process: the student's code
cannot reach this pipe. Which checks exist, and what each is worth, come from the collection event; each
collected check gets exactly one verdict (the first), and a check without one counts as failed.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.base.escape import identifiers, one_line, printable
from grader.base.homeworks import ROOT, Homework, Part
from grader.base.results import CheckResult, PartResult
from grader.boundary import confine, events, forkserver, template, zygote
from grader.grading import warm
from grader.grading.hidden import (
    DEFAULT_SECRET,
    INPUTS_ENV,
    SECRET_ENV,
    checks_version,
    fingerprint,
    hidden_available,
    secret,
)
from grader.grading.kit_digest import kit_digest

# --tb=native: a failure's traceback (shown with -v) as Python prints it; pytest's own style costs ~50 ms a failure;
# --assert=plain: graded checks explain themselves (grader.grading.checks), so no assertion rewriting (~0.5 s a process)
# no:unraisableexception, no:threadexception: no garbage collection passes after the last check (up to 0.1 s);
# no student object lives in this process, and warnings are ignored anyway
# -p grader.grading.plugin, --impl=PATH (one argument), --confcutdir: pytest never takes a submission's folder for a
# test path, so never loads a conftest.py (or any module) from it; only the kit's own conftest files under tests/
PYTEST_FLAGS = ["-q", "--tb=native", "--assert=plain", "-p", "grader.grading.plugin",
                "--confcutdir", str(ROOT / "tests"),
                "-p", "no:cacheprovider", "-p", "no:randomly",
                "-p", "no:unraisableexception", "-p", "no:threadexception",
                "-o", "addopts=", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"), "--no-header"]
_FIELDS = ("nodeid", "name", "title", "outcome", "kind", "message", "traceback", "weight", "bonus", "functions",
           "subject")
SILENCE_LIMIT = 120.0  # s without any event from the pytest process (beyond the per-check limit): it is stuck
_KIT: dict[str, str] = {}  # a homework's kit digest when this command line first graded it
KIT_CHANGED = ("файлы самого набора (grader/, tests/{hw}/, предоставленные модули) изменились с начала проверки: "
               "оценка не выставлена. Похоже, проверяемый код записал в них; восстановите набор (git checkout или "
               "заново распакуйте копию) и запустите проверку снова.")


def kit_rewritten(hw: Homework) -> None:
    """This command line itself changed the kit (grader.grading.secret wrote the key's answers on hidden inputs): later
    gradings compare with the kit as it is now."""
    _KIT.pop(hw.name, None)


def check_results(records: list[dict], guard: bool = True, show_hidden: bool = False) -> list[CheckResult]:
    """The verdicts, one per collected check, in collection order; a check without one has failed. ``guard``:
    a passed guard check whose functions' behaviour checks all failed fails too (:func:`guarded`). Checks on hidden
    inputs gate the others, and their twins are then left out (:func:`gated`; ``show_hidden``: their failures' texts
    too); a run of selected checks (``part-checks``) gates only what it ran an oracle check of."""
    collected = next((r for r in records if r.get("event") == "collected"), None)
    verdicts: dict[str, dict] = {}
    for rec in records:
        if rec.get("event") == "finished":
            break  # nothing after the end counts
        if rec.get("event") == "result" and rec.get("nodeid") not in verdicts:
            verdicts[rec["nodeid"]] = rec
    out = []
    for meta in (collected or {}).get("items", []):
        rec = verdicts.get(meta["nodeid"])
        subjects = [str(s) for s in meta.get("subjects") or []]
        # what the collection says the check is: a check that never ran still gates (a hidden twin) or is gated
        flags = {"guard": bool(meta.get("guard")), "hidden": bool(meta.get("hidden")),
                 "twin": str(meta.get("twin") or ""), "grade_only": bool(meta.get("grade_only")),
                 "oracle": bool(meta.get("oracle")), "replays": [str(r) for r in meta.get("replays") or []],
                 "gates": [str(g) for g in meta.get("gates") or []]}
        if rec is None:
            out.append(CheckResult(meta["nodeid"], meta["name"], meta["title"], "failed", "error",
                                   "проверка не дала результата (процесс проверки прервался)", weight=meta["weight"],
                                   bonus=meta["bonus"], subject=(subjects or [""])[0], subjects=subjects, **flags))
            continue
        subject = rec.get("subject") if rec.get("subject") in subjects else (subjects or [""])[0]
        out.append(CheckResult(**{**{k: rec.get(k, "") for k in _FIELDS},
                                  # the texts may quote the student's (an exception's message, an answer's repr)
                                  "message": printable(str(rec.get("message", "")), "\n\t"),
                                  "traceback": printable(str(rec.get("traceback", "")), "\n\t"),
                                  "nodeid": meta["nodeid"], "name": meta["name"],
                                  "title": meta["title"], "weight": meta["weight"], "bonus": meta["bonus"],
                                  "outcome": "passed" if rec.get("outcome") == "passed" else "failed",
                                  "functions": list(rec.get("functions") or []), "subject": subject,
                                  "subjects": subjects, "entered": _entered(rec.get("entered")),
                                  "defer": _defer(rec.get("defer")), "diagnosis": _diagnosis(rec.get("diagnosis")),
                                  **flags}))
    partial = any(r.get("event") == "part-checks" for r in records)
    out = gated(out, show_hidden, partial)
    return guarded(out) if guard else out


def _entered(value) -> dict[str, list[str]]:
    """A result's ``entered`` (function -> the functions its calls went through), identifiers only."""
    if type(value) is not dict:
        return {}
    return {k: identifiers(v) for k, v in value.items() if identifiers([k]) and type(v) is list}


def _diagnosis(value) -> str:
    """A result's ``diagnosis`` (the typical mistake its check named, a field the checking process set), one line."""
    return one_line(value) if type(value) is str else ""


def _defer(value) -> dict:
    """A result's ``defer`` ({"checks": test names, "text": the hint}), or {}."""
    if type(value) is not dict or type(value.get("text")) is not str or type(value.get("checks")) is not list:
        return {}
    return {"checks": [str(c) for c in value["checks"]], "text": value["text"]}


HIDDEN_FAILED = ("Открытые случаи пройдены, но {what}: функция даёт верный ответ на входах, которые есть в копии, "
                 "и неверный на других входах того же вида. Обычно это ответ, подобранный под открытые случаи, "
                 "или пропущенный крайний случай.")
HIDDEN_TWIN = "не пройден такой же случай на скрытых входах"
HIDDEN_NONE = "{subject} не проходит ни одной проверки на скрытых входах с ответом эталона"
HIDDEN_NONE_ALONE = ("Проверка засчитывается, только когда {subject} проходит хотя бы одну проверку с ответом эталона "
                     "на скрытых входах (входах того же вида, которых нет в копии), а такой нет: по свойствам, "
                     "статистике или собственным числам функции засчитать её нельзя.")
HIDDEN_PIECES = ("Проверка повторяет ваши же функции ({pieces}) и засчитывается, только когда каждая из них сама "
                 "проходит проверку с ответом эталона на скрытых входах; не проходят: {missing}. Исправьте сначала "
                 "их — тогда засчитается и эта проверка.")
HIDDEN_NOT_RUN = ("Проверка засчитывается, только когда {subject} проходит проверку с ответом эталона на скрытых "
                  "входах, а до них дело не дошло: функция превысила лимит времени на другой проверке, и больше её "
                  "не вызывали. Исправьте проверку, где время вышло, — тогда выполнятся и скрытые.")
SHOW_HIDDEN = "Скрытые входы и ответ показывает преподавателю флаг --show-hidden."


def open_gates(checks: list[CheckResult]) -> set[str]:
    """The gates opened on hidden inputs: those of every oracle check that passed there (a hidden twin, a check run
    only in the grade, a statistical one run on hidden seeds), a replay only once each piece it composes is open."""
    opened: set[str] = set()
    growing = True
    while growing:  # a replay's pieces may be opened by other replays
        growing = False
        for c in checks:
            if c.hidden and c.oracle and c.passed and set(c.replays) <= opened and not set(c.gates) <= opened:
                opened |= set(c.gates)
                growing = True
    return opened


def gated(checks: list[CheckResult], show_hidden: bool = False, partial: bool = False) -> list[CheckResult]:
    """The checks that carry points, each counted only when its function works on hidden inputs; the twins left out.

    A gate (a function, or one behaviour of it: grader.grading.checks.graded) opens when one of its oracle checks passes
    on hidden inputs; nothing else opens one: a property, bookkeeping, a statistic or a comparison of the function with
    itself, twins or not. A check counts when it passed, its hidden twins passed (one more condition on their public
    case), each of its gates is open, and, for a replay of the student's own functions, each of theirs is. One missed
    hidden case costs that check, not the function; a submission that knows only the public answers, or that does
    nothing the key can tell from working, scores nothing. ``partial``: a run of selected checks, where a gate none of
    whose oracle checks ran is not judged (a grade for the record runs them all)."""
    hidden = [c for c in checks if c.hidden]
    if not hidden:
        return checks
    gates = _Gates(checks, hidden, partial)
    twins: dict[str, list[CheckResult]] = {}
    for c in hidden:
        if c.twin:
            twins.setdefault(c.name.split("[")[0] + "[" + c.twin + "]", []).append(c)
    for c in checks:
        if c.twin or not c.passed:
            continue
        failed = [t for t in twins.get(c.name, []) if not t.passed]
        text = _not_counted(c, failed, gates, c.name in twins)
        if text is None:
            continue
        c.outcome, c.kind = "failed", "hidden"
        # a diagnosis the check itself made on the hidden input: its field, never a line of its text
        told = [t.diagnosis for t in failed if t.kind == "check" and t.diagnosis][:1]
        c.diagnosis = told[0] if told else ""
        detail = ([f"Скрытая проверка {failed[0].name} (повторить: та же команда с ней вместо открытой):\n"
                   f"{failed[0].message}"] if show_hidden and failed else
                  told + ([] if show_hidden or not failed else [SHOW_HIDDEN]))
        c.message = "\n".join([text, *detail])
    return [c for c in checks if not c.twin]


class _Gates:
    """The gates as the checks on hidden inputs left them: which are open, and which closed ones say nothing of
    the answers."""

    def __init__(self, checks: list[CheckResult], hidden: list[CheckResult], partial: bool):
        self.hidden = hidden
        self.judged = {g for c in hidden if c.oracle for g in c.gates}  # an oracle check on hidden inputs can open
        self.opened = open_gates(checks)
        self.partial = partial

    def closed(self, gates: list[str]) -> list[str]:
        return [g for g in gates if g not in self.opened and (g in self.judged or not self.partial)]

    def never_ran(self, gates: list[str]) -> bool:
        """Each of these gates' oracle checks on hidden inputs was not run (its function had hung before) or ran
        out of time: a closed gate that says nothing of the answers."""
        ran = [c for c in self.hidden if c.oracle and set(c.gates) & set(gates)]
        return bool(ran) and all(c.kind in ("hung", "timeout") for c in ran)


def _not_counted(c: CheckResult, failed: list[CheckResult], gates: _Gates, has_twins: bool) -> str | None:
    """Why check ``c``, which passed, does not count (None: it counts); ``failed``: its hidden twins that failed,
    ``has_twins``: whether it has any. Where the reason is a function that ran out of time, ``c.subject`` becomes
    that function."""
    if failed and all(t.kind in ("hung", "timeout") for t in failed):
        c.subject = failed[0].subject or c.subject  # the function that ran out of time
        return HIDDEN_NOT_RUN.format(subject=c.subject)
    if failed:
        return HIDDEN_FAILED.format(what=HIDDEN_TWIN)
    if gates.closed(c.replays):
        return HIDDEN_PIECES.format(pieces=", ".join(c.replays), missing=", ".join(gates.closed(c.replays)))
    closed = gates.closed(c.gates)
    if closed and gates.never_ran(closed):
        # said about the function that ran out of time, not about another one this check also calls
        c.subject = next((g for g in closed if g in c.subjects), c.subject)
        return HIDDEN_NOT_RUN.format(subject=", ".join(closed))
    if closed:
        names = ", ".join(closed)
        return (HIDDEN_FAILED.format(what=HIDDEN_NONE.format(subject=names)) if has_twins or not c.hidden
                else HIDDEN_NONE_ALONE.format(subject=names))
    return None


WITHHELD = ("Проверка на скрытых входах (их нет в вашей копии) не пройдена. Её входы, ожидаемый ответ и то, что "
            "ответил ваш код, не показываются: по ним можно было бы подогнать ответ.")
_KEPT_KINDS = ("hung",)  # texts the checking side writes alone: the function and the title of the check it hung in


def withheld(c: CheckResult) -> CheckResult:
    """``c`` as a grade shows it without ``--show-hidden``: a failed check on hidden inputs (a hidden twin, a check run
    only in the grade, a ``behaviour=True`` one: ``c.hidden``, from the collection's marks) keeps its verdict, its kind
    and the names of typical mistakes its check made, but none of its detail: no input, no expected value, no text of
    the student's code (their exception, their answer, where it hung), no traceback. A function not written yet is
    said by its name as the check declares it."""
    if not c.hidden or c.passed or c.kind in _KEPT_KINDS:
        return c
    if c.kind == "todo" and c.subject.isidentifier():
        return dataclasses.replace(c, message=f"не реализовано (TODO): {c.subject}", traceback="")
    named = [c.diagnosis] if c.diagnosis and c.kind == "check" else []  # the check's field, never its text
    return dataclasses.replace(c, message="\n".join([WITHHELD, *named, SHOW_HIDDEN]), traceback="")


def guarded(checks: list[CheckResult]) -> list[CheckResult]:
    """A passed guard check (one that code doing nothing could pass) fails when none of the checks of its functions'
    behaviour that ran passed: raising ValueError on everything, or one constant answer, earns nothing."""
    behaviour: dict[str, list[bool]] = {}
    for c in checks:
        if not c.guard:
            for f in c.subjects:
                behaviour.setdefault(f, []).append(c.passed)
    for c in checks:
        ran = [ok for f in c.subjects for ok in behaviour.get(f, [])]
        if c.guard and c.passed and ran and not any(ran):
            c.outcome, c.kind = "failed", "check"
            c.message = (f"Проверка засчитывается вместе с проверками того, что {', '.join(c.subjects)} считает "
                         "верно, а ни одна из них не пройдена.\nПодсказка: сначала добейтесь верного ответа на "
                         "обычных входах — тогда засчитается и эта проверка.")
    return checks


def notes(records: list[dict]) -> list[str]:
    """What the implementation reported while loading (a notebook's cells that failed)."""
    return [printable(str(line)) for rec in records if rec.get("event") == "notes" for line in rec["lines"]]


def checking_environment(token: str, inputs: str = "public", uid: int | None = None) -> dict[str, str]:
    """The environment of a checking process of the grading run ``token``, on ``inputs`` (grader.grading.hidden), its
    workers run as ``uid`` (with namespaces, their root outside them)."""
    env = dict(os.environ)
    env[INPUTS_ENV] = inputs  # bytecode of the kit's own modules may be cached: no student module is imported here
    # no third-party pytest plugins: whatever is installed on the machine, the checks run the same way
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env["PYTHONIOENCODING"] = "utf-8"
    # the checks' own linear algebra is small: BLAS threads would only spin (0.1 s CPU per checking process)
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["HWKIT_RUN_TOKEN"] = token
    env[confine.MARKER] = token  # a process of the run, like its zygotes and workers: Ctrl-C reaps it by the marker
    # probed once here, not in every checking process (the worker falls back if they fail after all)
    env["HWKIT_CONFINE"] = "on" if confine.namespaces_available() else "off"
    env[confine.SEPARATE_ENV] = "on" if confine.separate_user_available() else "off"
    env.pop(confine.UID_ENV, None)
    if uid is not None:
        env[confine.UID_ENV] = str(uid)
    return env


def run_part(hw: Homework, part: Part, impl: str, selection: list[str] | None = None,
             timeout: float | None = None, **options) -> PartResult:
    """Grade one part; ``selection`` narrows it to test names (``test_x`` or ``test_x[id]``)."""
    return run_parts(hw, [(part, selection)], impl, timeout, **options)[0]


def inputs_for(hw: Homework, public: bool = False) -> str:
    """"hidden" (the grade for the record: public and hidden inputs) where the instructor's key is present and
    ``public`` is not asked for; "public" (a self-check) otherwise."""
    return "public" if public or not hidden_available(hw.tests_dir) else "hidden"


def _secret_named(hw: Homework) -> str:
    text = secret(hw.tests_dir)
    return fingerprint(text) + ("-default" if text == DEFAULT_SECRET else "")


def protect_key(hw: Homework) -> None:
    """The instructor's answer key and secret readable by their owner only: a worker run as a user of its own
    (without namespaces) cannot read them; with namespaces it does not see them at all (boundary.zygote.visible).
    Where workers run as another user, also what else of the instructor's gives answers away: the reference
    solutions, the kit's own tests (their correct variants and typical mistakes) and its git history (which holds
    both)."""
    folder = hw.tests_dir / "key"
    closed = [folder, *folder.glob("*")] if folder.is_dir() else []
    if confine.mode() == "user":
        closed += [p for p in (ROOT / "solutions", ROOT / "tests" / "kit", ROOT / ".git")
                   if p.is_dir() and not p.is_symlink()]
    for path in closed:
        try:
            os.chmod(path, 0o700 if path.is_dir() else 0o600)
        except OSError:
            pass


def run_parts(hw: Homework, selected: list[tuple[Part, list[str] | None]], impl: str,
              timeout: float | None = None, public: bool = False, show_hidden: bool = False,
              uid: int | None = None) -> list[PartResult]:
    """Grade several parts in one checking process (pytest starts once); each part's code runs in a worker of
    its own, with the part's time limit per check (``timeout`` overrides it). On hidden inputs too unless ``public``
    (:func:`inputs_for`); ``show_hidden``: a failure on hidden inputs shows them (else :func:`withheld`). Under a root
    grader the workers run as ``uid``, the submission's own user (grader.boundary.confine.lease; leased here for
    this call when not given), those of hidden checks as its hidden twin (confine.hidden_uid)."""
    with confine.lease(uid) as uid:
        return _run_parts(hw, selected, impl, timeout, public, show_hidden, uid)


def _run_parts(hw: Homework, selected: list[tuple[Part, list[str] | None]], impl: str, timeout: float | None,
               public: bool, show_hidden: bool, uid: int | None) -> list[PartResult]:
    started = time.perf_counter()
    inputs = inputs_for(hw, public)
    kit = _KIT.setdefault(hw.name, kit_digest(hw))
    protect_key(hw)
    results = {part.id: PartResult(part, inputs=inputs, kit=checks_version(hw.tests_dir),
                                   secret=_secret_named(hw) if inputs == "hidden" else "")
               for part, _ in selected}
    targets, selects = _targets(hw, selected, results, kit)
    if targets:
        if STOPPING.is_set():  # the command line is ending (Ctrl-C): no new run
            raise Stopped
        token = f"{RUN_TOKEN}.{uuid.uuid4().hex}"  # under the command line's: stop_all() reaps every run by it
        # the zygote of the workers boots while pytest starts (boundary/zygote.py); the checking process gets its socket
        nursery = zygote.for_checking_process(hw, confine.namespaces_available(), token, uid)
        if nursery is not None and nursery.proc is not None:
            _started(token, nursery.proc)
        link = _template_link()  # the checking process's own connection to the batch's worker template, if any
        cmd = [sys.executable, "-m", "pytest", *targets, *selects, f"--impl={impl}", "--events", "--capture=no",
               "--homework", hw.name, *(["--check-timeout", str(timeout)] if timeout is not None else []),
               *(["--zygote", f"{nursery.control.fileno()}:{nursery.base}"] if nursery else []),
               *(["--worker-template", str(link.fileno())] if link else []),
               *PYTEST_FLAGS, "-W", "ignore"]
        limit = timeout if timeout is not None else max(part.timeout for part, _ in selected)
        try:
            with tempfile.TemporaryDirectory(prefix="hwrun-") as tmp:
                records, output, stuck, forged = _follow(cmd, Path(tmp), token, limit, nursery, inputs, uid, link)
        finally:
            if link is not None:
                link.close()
            if nursery is not None:
                nursery.remove()
            _finished(token)
        _sort(hw, selected, results, records, output, stuck, forged, show_hidden)
        if kit_digest(hw) != kit:  # changed while this process graded: its verdicts are not a grade
            for r in results.values():
                r.checks, r.error = [], KIT_CHANGED.format(hw=hw.name)
    seconds = time.perf_counter() - started
    for r in results.values():
        r.seconds = seconds
    return [results[part.id] for part, _ in selected]


def _targets(hw: Homework, selected: list[tuple[Part, list[str] | None]], results: dict[str, PartResult],
             kit: str) -> tuple[list[str], list[str]]:
    """The test files the checking process runs and the plugin's selections in them; a part whose file is missing,
    or whose kit an earlier submission's code changed (``kit``: its digest before), gets its error instead."""
    targets, selects = [], []
    for part, selection in selected:
        test_file = hw.tests_dir / part.tests
        if not test_file.is_file():
            results[part.id].error = f"нет файла с проверками {test_file.relative_to(ROOT)}"
            continue
        if kit_digest(hw) != kit:  # an earlier submission's code changed the kit: this one is not graded with it
            results[part.id].error = KIT_CHANGED.format(hw=hw.name)
            continue
        targets.append(test_file.as_posix())
        selects += [f"--select={part.tests}::{s}" for s in selection or []]  # the plugin selects: one collection
    return targets, selects


def _sort(hw: Homework, selected, results: dict[str, PartResult], records: list[dict], output: str, stuck: bool,
          forged: int, show_hidden: bool = False) -> None:
    """Each check's verdict, note and error to the part whose test file it is in."""
    by_file = {part.tests: part.id for part, _ in selected}
    by_module = {part.module: part.id for part, _ in selected}
    level = "; ".join(r["level"] for r in records if r.get("event") == "confinement")
    for check in check_results(records, show_hidden=show_hidden):
        owner = by_file.get(check.nodeid.split("::")[0].rsplit("/", 1)[-1])
        if owner is not None:
            results[owner].checks.append(check if show_hidden else withheld(check))
    for rec in records:
        if rec.get("event") == "part-checks" and by_file.get(rec.get("file")) in results:
            results[by_file[rec["file"]]].all_checks = [dict(item) for item in rec.get("items", [])
                                                        if not item.get("twin")]
        if rec.get("event") == "grade-only":
            for item in rec.get("items", []):
                owner = by_file.get(str(item.get("nodeid", "")).split("::")[0].rsplit("/", 1)[-1])
                if owner in results:
                    results[owner].grade_only.append(dict(item))
        if rec.get("event") == "unknown-checks":
            for name in rec.get("names", []):
                file, _, check = str(name).partition("::")
                if by_file.get(file) in results:
                    results[by_file[file]].unknown.append(check)
        if rec.get("event") == "part-cpu" and by_module.get(rec.get("module")) in results:
            results[by_module[rec["module"]]].cpu = float(rec.get("seconds") or 0.0)
        if rec.get("event") == "notes":
            owner = by_module.get(rec.get("module"))
            for part_id in [owner] if owner else list(results):
                lines = [printable(str(n)) for n in rec["lines"]]  # a notebook cell's error: the student's text
                results[part_id].notes += [n for n in lines if n not in results[part_id].notes]
    errors = "\n".join(r["text"] for r in records if r.get("event") == "collect-error")
    for part, selection in selected:
        r = results[part.id]
        r.confinement, r.forged = level, forged
        if r.error:
            continue
        if r.unknown:
            r.error = f"нет проверки с таким именем: {', '.join(r.unknown)}"
        elif not r.checks:
            r.error = collection_error(errors + output, selection)
        elif stuck:
            r.error = "процесс проверки завис и был остановлен (это ошибка самой проверки, а не вашего кода)"


def schedule(selected: list, jobs: int) -> list[list]:
    """``selected`` (part, selection) pairs in at most ``jobs`` groups of about equal cost, the costliest part
    first (longest processing time first); each group is graded by one checking process."""
    groups: list[list] = [[] for _ in range(max(1, min(jobs, len(selected))))]
    load = [0.0] * len(groups)
    for item in sorted(selected, key=lambda item: -item[0].cost):
        k = load.index(min(load))
        groups[k].append(item)
        load[k] += item[0].cost
    return [g for g in groups if g]


def _template_link():
    """A connection of its own to the worker template of the batch running here (grader.boundary.template), for a
    checking process about to start: the zygote of its hidden checks is forked by it too. None where there is none."""
    held = template.current()
    if held is None:
        return None
    try:
        return held.connect()
    except forkserver.ServerGone:
        return None


def _follow(cmd: list[str], tmp: Path, token: str, limit: float, nursery: zygote.Zygote | None = None,
            inputs: str = "public", uid: int | None = None, link=None) -> tuple[list[dict], str, bool, int]:
    """Run the pytest process (handing it the control socket of ``nursery``, its zygote, and ``link``, its connection
    to the worker template); return its signed events, the tail of its own output, whether it had to be killed, and
    how many lines were not signed with this run's key (ignored)."""
    err_path = tmp / "pytest-output.txt"
    lines: queue.Queue = queue.Queue()
    key = secrets.token_hex(32).encode()
    confine.not_dumpable()
    with open(err_path, "wb") as err:
        fds = tuple(s.fileno() for s in (nursery.control if nursery is not None else None, link) if s is not None)
        proc = _start(cmd, str(tmp), checking_environment(token, inputs, uid), err, fds)
        if link is not None:  # the checking process's own now
            link.close()
        _started(token, proc)
        if nursery is not None:  # the checking process holds the zygote now: it lives as long as that process
            nursery.control.close()
            nursery.control = None
        proc.stdin.write(key + b"\n")
        proc.stdin.close()

        def read():
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        records: list[dict] = []
        stuck, forged = False, 0
        while True:
            try:
                line = lines.get(timeout=limit * confine.WALL_FACTOR + SILENCE_LIMIT)
            except queue.Empty:
                stuck = True
                proc.kill()
                break
            if line is None:
                break
            record = events.read(key, line)
            if record is None:
                forged += 1
            else:
                records.append(record)
        proc.wait()
    confine.reap(token)  # a worker the pytest process could not end itself
    return records, _read_tail(err_path), stuck, forged


def _start(cmd: list[str], cwd: str, env: dict[str, str], err, fds: tuple[int, ...]):
    """The checking process: forked by the batch's checking template where one runs (grader.grading.warm), else started
    cold; either way with exactly ``env``, in a session of its own."""
    template = warm.current()
    if template is not None:
        try:
            return template.run(cmd, cwd, env, err, fds)
        except warm.TemplateGone:
            pass
    return subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env,
                            start_new_session=True, pass_fds=fds)


def template_environment() -> dict[str, str]:
    """The checking template's environment: the checking processes' but for what each run sets for itself (inputs,
    confinement, the workers' uid, the secret's file, the run's token), with the command line's marker."""
    env = checking_environment(RUN_TOKEN)
    for name in (INPUTS_ENV, SECRET_ENV, "HWKIT_CONFINE", confine.SEPARATE_ENV, confine.UID_ENV, "HWKIT_RUN_TOKEN"):
        env.pop(name, None)
    env[confine.MARKER] = RUN_TOKEN
    return env


@contextlib.contextmanager
def checking_template():
    """The two templates of a block that grades (a batch, grader.batch, or one grade, grader.cli; a warm start): the
    checking template (grader.grading.warm; its environment: :func:`template_environment`), and the worker template the
    zygotes are forked from (grader.boundary.template). Both carry the command line's marker: Ctrl-C ends them and
    all they forked. Where this process holds a connection to a checking template already (grader.grading.warm.adopt:
    the kit's own suite holds both for all its runs), the block uses those and starts none."""
    if warm.current() is not None:
        yield warm.current()
        return
    stack = contextlib.ExitStack()
    with stack:
        checking = stack.enter_context(warm.template(template_environment()))
        if checking is not None and zygote.available():  # the zygotes forked by the worker template (by exec, with a
            stack.enter_context(template.template(RUN_TOKEN))  # worker's clean environment: it never holds the key)
        yield checking


# ---- Ctrl-C: the command line's runs ended at once -------------------------------------------------------------

# the command line's marker: each run's token is under it (``RUN.<run>``, and its sessions' ``RUN.<run>.<session>``),
# so one reap finds every process it started; a parent that sets HWKIT_RUN_TOKEN finds them by its own
RUN_TOKEN = os.environ.get("HWKIT_RUN_TOKEN") or uuid.uuid4().hex
STOPPING = threading.Event()  # set by stop_all(): no run starts any more
_LIVE_LOCK = threading.Lock()
_LIVE: dict[str, list[subprocess.Popen]] = {}  # run token -> its zygote and checking process, started here


class Stopped(Exception):
    """The command line is ending (Ctrl-C): a run it would start now is not started."""


def _started(token: str, proc: subprocess.Popen) -> None:
    """Note a process started here for the run ``token`` (the leader of a session of its own: its group is killed
    whole); when the command line is ending already, end it now."""
    with _LIVE_LOCK:
        _LIVE.setdefault(token, []).append(proc)
    if STOPPING.is_set():
        _end([proc])


def _finished(token: str) -> None:
    with _LIVE_LOCK:
        _LIVE.pop(token, None)


def _end(processes: list[subprocess.Popen]) -> None:
    for proc in processes:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass


def stop_all() -> None:
    """End every process of this command line's runs now: the checking processes and zygotes it started (each a
    process group), then whatever carries its marker (workers, a zygote a checking process started itself).
    With namespaces a zygote's end takes its workers with it; without, the reap finds them."""
    STOPPING.set()
    with _LIVE_LOCK:
        live = [proc for procs in _LIVE.values() for proc in procs]
    _end(live)
    confine.reap(RUN_TOKEN)


@contextlib.contextmanager
def interruptible(jobs: int):
    """A pool of ``jobs`` threads that grade. On Ctrl-C (or any exception) in the block, the jobs not started are
    dropped and every process of the command line's runs is ended (:func:`stop_all`) before the exception goes on:
    the threads then return at once, their processes gone, instead of grading to the end."""
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        yield pool
    except BaseException:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C would leave the cleanup half done
        pool.shutdown(wait=False, cancel_futures=True)
        stop_all()
        pool.shutdown(wait=True)
        confine.reap(RUN_TOKEN)  # a process started while the first reap ran
        raise
    pool.shutdown(wait=True)


def _read_tail(path: Path, limit: int = 64_000) -> str:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - limit))
        return f.read().decode("utf-8", errors="replace")


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def collection_error(output: str, selection: list[str] | None) -> str:
    if selection and ("not found" in output or "no match" in output):
        return f"нет проверки с таким именем: {', '.join(selection)}"
    return "не удалось собрать проверки:\n" + _tail(output)


class Reader:
    """Reads complete JSON lines appended to a file (the in-notebook self-check's events)."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0
        self.buffer = b""  # bytes: a read may stop in the middle of a line, even of a UTF-8 character
        self.records: list[dict] = []

    def read(self) -> list[dict]:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            chunk = f.read()
            self.offset = f.tell()
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        new = [json.loads(line.decode("utf-8")) for line in lines if line.strip()]
        self.records.extend(new)
        return new
