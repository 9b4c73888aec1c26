"""Running one part's graded checks in a child process that may hang, crash or exit.

The child is ``python -m pytest <part's test file> --impl ... --results-file F``; the parent follows
F line by line. When a check runs past its time limit, the child's watchdog (faulthandler, see
``--check-timeout`` in plugin.py) writes where the code was and ends the child (the parent kills it a
little later if that fails); that check is marked «превышено время» with the function and line, and a
fresh child grades the checks that remain. In that child, the function the timeout was traced to fails at
once when called (``--hung-functions``), so a loop costs the limit once, not once per check that calls it.
A child that dies in the middle of a check (``os._exit``, a crash) is treated the same way. No signals,
so it works on Windows too.
"""
from __future__ import annotations

import json
import linecache
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.homeworks import ROOT, Homework, Part


@dataclass
class CheckResult:
    nodeid: str
    name: str
    title: str
    outcome: str  # passed or failed
    kind: str = ""  # for a failure: check, todo, error, timeout, hung (not run: the function hung before),
    # crash, load (the module did not load)
    message: str = ""
    traceback: str = ""
    weight: float = 1.0
    bonus: bool = False
    functions: list[str] = field(default_factory=list)  # the module-under-test's functions the check called,
    # in order of first call (for grouping the feedback by function)

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


@dataclass
class PartResult:
    part: Part
    checks: list[CheckResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str = ""  # the part could not be graded at all
    seconds: float = 0.0

    def _weights(self, bonus: bool) -> tuple[float, float]:
        own = [c for c in self.checks if c.bonus == bonus]
        return sum(c.weight for c in own if c.passed), sum(c.weight for c in own)

    @property
    def score(self) -> float:
        got, total = self._weights(False)
        return self.part.points * got / total if total else 0.0

    @property
    def bonus_score(self) -> float:
        got, total = self._weights(True)
        return self.part.bonus_points * got / total if total else 0.0

    @property
    def n_passed(self) -> int:
        return sum(c.passed for c in self.checks)


PYTEST_FLAGS = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=", "--rootdir", str(ROOT),
                "-c", str(ROOT / "pyproject.toml"), "--no-header"]


def _child_command(test_args: list[str], impl: str, results: Path, limit: float,
                   hung: dict[str, dict[str, str]] | None = None) -> list[str]:
    # The child runs in a scratch folder (files the student's code writes with relative paths land
    # there, not in the repository or the student's folder), so the tests are named by absolute paths.
    test_args = [f"{ROOT.as_posix()}/{a}" for a in test_args]
    return [sys.executable, "-m", "pytest", *test_args, "--impl", impl, "--results-file", str(results),
            "--check-timeout", str(limit), *(["--hung-functions", json.dumps(hung)] if hung else []),
            *PYTEST_FLAGS, "-W", "ignore"]


def check_results(records: list[dict]) -> list[CheckResult]:
    """The checks that finished, from the plugin's events."""
    fields = ("nodeid", "name", "title", "outcome", "kind", "message", "traceback", "weight", "bonus")
    return [CheckResult(**{k: rec[k] for k in fields}, functions=[str(f) for f in rec.get("functions") or []])
            for rec in records if rec.get("event") == "result"]


def notes(records: list[dict]) -> list[str]:
    """What the implementation reported while loading (a notebook's cells that failed)."""
    return [line for rec in records if rec.get("event") == "notes" for line in rec["lines"]]


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # never leave __pycache__ in the student's folder
    # no third-party pytest plugins (hypothesis, benchmark, randomly, ...): whatever is installed on the machine,
    # the checks run the same way, and startup is ~0.4 s faster per part; the grader's plugin comes from conftest.py
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def run_part(hw: Homework, part: Part, impl: str, selection: list[str] | None = None,
             timeout: float | None = None) -> PartResult:
    """Grade one part; ``selection`` narrows it to test names (``test_x`` or ``test_x[id]``)."""
    started = time.perf_counter()
    limit = timeout if timeout is not None else part.timeout
    test_file = hw.tests_dir / part.tests
    result = PartResult(part)
    if not test_file.is_file():
        result.error = f"нет файла с проверками {test_file.relative_to(ROOT)}"
        return result
    rel = test_file.relative_to(ROOT).as_posix()
    pending: list[str] | None = [f"{rel}::{s}" for s in selection] if selection else None
    done: dict[str, CheckResult] = {}
    collected: list[str] = []
    meta: dict[str, dict] = {}  # nodeid -> name, title, weight, bonus of every collected check
    hung: dict[str, dict[str, str]] = {}  # module -> {function that ran past the limit: the check it hung in}
    with tempfile.TemporaryDirectory(prefix="hwgrade-") as tmp:
        for attempt in range(1000):
            results_file = Path(tmp) / f"results-{attempt}.jsonl"
            args = pending if pending is not None else [rel]
            outcome = _run_child(_child_command(args, impl, results_file, limit, hung), results_file, limit,
                                 Path(tmp), _impl_path(hw, impl))
            for line in outcome.notes:
                if line not in result.notes:
                    result.notes.append(line)
            if outcome.collected is not None and not collected:
                collected = outcome.collected
            meta.update(outcome.meta)
            for rec in outcome.results:
                done[rec.nodeid] = rec
            if outcome.interrupted is None:
                if not collected and not done:
                    result.error = collection_error(outcome.output, selection)
                break
            nodeid, kind, message = outcome.interrupted
            if nodeid is None:  # died before any check started: nothing more can be learned by retrying
                result.error = message
                break
            if outcome.hung_module:  # loading the module hangs or kills the process: every check needing it would too
                kind = "load"
            done[nodeid] = _failed(outcome.started.get(nodeid) or meta.get(nodeid) or {"nodeid": nodeid}, kind, message)
            module, func = outcome.hung_function or (None, None)
            if kind == "timeout" and func and module in (part.module, "<cell>"):
                # the next children fail this function's calls at once instead of waiting the limit again
                hung.setdefault(part.module, {})[func] = done[nodeid].title
            if outcome.hung_module:
                for other in collected:
                    done.setdefault(other, _failed(meta.get(other) or {"nodeid": other}, kind, message))
            pending = [n for n in collected if n not in done]
            if not pending:
                break
    result.checks = [done[n] for n in collected if n in done] + [r for n, r in done.items() if n not in collected]
    result.seconds = time.perf_counter() - started
    return result


@dataclass
class _ChildOutcome:
    results: list[CheckResult]
    collected: list[str] | None
    notes: list[str]
    started: dict[str, dict]  # the start event of each check: its name, title, weight
    interrupted: tuple[str | None, str, str] | None  # (nodeid, kind, message) when the child was killed or died
    hung_module: bool
    output: str
    meta: dict[str, dict] = field(default_factory=dict)
    hung_function: tuple[str, str] | None = None  # (module file stem or "<cell>", function) a timeout was in


def _impl_path(hw: Homework, impl: str) -> Path:
    return ROOT / impl / hw.name if impl in ("homework", "solutions") else Path(impl)


def _run_child(cmd: list[str], results_file: Path, limit: float, tmp: Path, inside: Path) -> _ChildOutcome:
    out_path = tmp / "child-output.txt"
    results_file.touch()
    with open(out_path, "wb") as out:
        scratch = tmp / f"cwd-{results_file.stem}"
        scratch.mkdir()
        proc = subprocess.Popen(cmd, cwd=str(scratch), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=_child_env())
        reader = Reader(results_file)
        current, since, loading = None, time.monotonic(), None
        last_event, finished_at = time.monotonic(), None
        killed = stuck = False
        while True:
            code = proc.poll()
            for rec in reader.read():
                ev = rec.get("event")
                last_event = time.monotonic()
                if ev == "finished":
                    finished_at = last_event
                if ev == "start":
                    current, since = rec["nodeid"], time.monotonic()
                elif ev == "result":
                    current = None
                elif ev == "load-start":
                    loading = rec["module"]
                elif ev == "load-end":
                    loading = None
            if code is not None:
                break
            now = time.monotonic()
            if current is not None and now - since > limit + _KILL_GRACE:
                killed = True  # the child's own watchdog (--check-timeout) should have ended it already
            elif current is None and (now - last_event > max(limit, _IDLE_LIMIT)
                                      or finished_at is not None and now - finished_at > _EXIT_GRACE):
                # outside any check: a thread or an atexit handler of the student's code keeps the
                # process alive after the last check, or the child is stuck before the first one
                stuck = True
            if killed or stuck:
                proc.kill()
                proc.wait()
                break
            time.sleep(0.02)
    for rec in reader.read():
        pass
    results = check_results(reader.records)
    collected_event = next((rec for rec in reader.records if rec.get("event") == "collected"), None)
    collected = collected_event["nodeids"] if collected_event else None
    meta = {m["nodeid"]: m for m in (collected_event or {}).get("items", [])}
    finished = any(rec.get("event") == "finished" for rec in reader.records)
    output = _read_tail(out_path)
    interrupted = None
    hung = False
    hung_function = None
    hang_file = Path(str(results_file) + ".hang")
    dump = hang_file.read_text(encoding="utf-8", errors="replace") if hang_file.is_file() else ""
    if killed or (dump.strip() and not finished):
        where, hung_function = _hang_location(dump, inside)
        if loading:
            hung = True
            message = (f"превышено время ({limit:g} с) при загрузке модуля {loading}.py: "
                       "похоже, на верхнем уровне модуля бесконечный цикл или долгий расчёт.")
        else:
            message = (f"превышено время ({limit:g} с): проверка не закончилась. "
                       "Нет ли бесконечного цикла (while без выхода, условие остановки, которое не выполняется)?")
        interrupted = (current, "timeout", message + (f"\n{where}" if where else ""))
    elif stuck and not finished:
        interrupted = (None, "timeout", f"процесс проверки завис вне проверок и был остановлен:\n{_tail(output)}")
    elif not finished and loading and current:
        hung = True
        message = (f"процесс проверки завершился при загрузке модуля {loading}.py (код {proc.returncode}): "
                   "на верхнем уровне модуля вызван os._exit или интерпретатор упал. Уберите этот вызов "
                   "из модуля: при импорте должны только определяться функции.")
        interrupted = (current, "crash", message)
    elif not finished:
        message = (f"процесс проверки завершился посреди проверки (код {proc.returncode}): ваш код вызвал "
                   "os._exit, завершил интерпретатор или упал. Остальные проверки продолжены отдельно.")
        interrupted = (current, "crash", message) if current else (None, "crash", _tail(output) or message)
    started = {rec["nodeid"]: rec for rec in reader.records if rec.get("event") == "start"}
    return _ChildOutcome(results, collected, notes(reader.records), started, interrupted, hung, output, meta,
                         hung_function)


def _failed(start: dict, kind: str, message: str) -> CheckResult:
    name = start.get("name") or start["nodeid"].split("::")[-1]
    return CheckResult(start["nodeid"], name, start.get("title", name), "failed", kind, message,
                       weight=start.get("weight", 1.0), bonus=start.get("bonus", False))


_FRAME = re.compile(r'File "(.+)", line (\d+) in (\S+)')


def _hang_location(dump: str, inside: Path) -> tuple[str, tuple[str, str] | None]:
    """Where the student's code was when the watchdog fired: the most recent frame in their files, as a
    sentence, and (module file stem or "<cell>", function)."""
    for match in _FRAME.finditer(dump):
        filename, line, func = match.group(1), int(match.group(2)), match.group(3)
        if filename.startswith("<"):  # a notebook cell; faulthandler escapes non-ASCII characters
            name = filename.encode("ascii", "backslashreplace").decode("unicode_escape")
            if name.startswith("<ячейка"):
                return f"В этот момент выполнялась функция {func} ({name[1:-1]}, строка {line}).", ("<cell>", func)
            continue
        try:
            if not Path(filename).resolve().is_relative_to(inside.resolve() if inside.is_dir() else inside.parent):
                continue
        except (OSError, ValueError):
            continue
        code = linecache.getline(filename, line).strip()
        what = "верхний уровень модуля" if func == "<module>" else f"функция {func}"
        return (f"В этот момент выполнялась {what} ({Path(filename).name}, строка {line})"
                + (f": «{code}»" if code else "") + "."), (Path(filename).stem, func)
    return "", None


_KILL_GRACE = 3.0  # s after the time limit before the parent kills a child whose watchdog did not end it
_IDLE_LIMIT = 60.0  # s without any event outside a check (startup and collection take well under a second)
_EXIT_GRACE = 3.0  # s the child may take to exit after its last check


def _read_tail(path: Path, limit: int = 64_000) -> str:
    """The last ``limit`` bytes of the child's output: the student's code may have printed gigabytes."""
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
    """Reads complete JSON lines appended to a file by the child."""

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
