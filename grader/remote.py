"""The grading side of the trust boundary: the submission's modules as proxies whose calls cross a pipe.

A graded test gets the part's module as a :class:`RemoteModule`; ``module.f(...)`` pickles the call to a worker process
(:mod:`grader.worker`), which alone imports and runs the student's code, and decodes the answer with
:mod:`grader.wire`: plain data rebuilt as exact types, so no returned object can run code here. What the call
did to its arguments comes back too: a changed array, list, dict or random generator is copied into the
test's own object (so "the inputs are unchanged" and "the generator advanced" keep their meaning), and the
method calls made on the kit's environments are replayed on the test's own environment objects (so what an
environment records is what this process computed, never what the worker claims).

A call that runs past the check's time limit, kills its worker or answers with something else fails the
check that made it; the next call gets a fresh worker, which loads the modules again.
"""
from __future__ import annotations

import builtins
import importlib.util
import os
import pickle
import queue
import re
import secrets
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import typing
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader import confine, wire, zygote
from grader.escape import printable
from grader.homeworks import ROOT, Homework
from grader.loading import MissingFunction, ModuleLoadError

GRACE = 2.0  # s after a call's time limit before the worker is killed if its own watchdog did not end it
START_LIMIT = 30.0  # s for a worker to start (Python, NumPy, the file system view)
_IGNORED = {"__pycache__", ".ipynb_checkpoints", ".git", ".pytest_cache"}
# the working folder (the submission's scratch folder for a worker of its own) never on the import path: its
# numpy.py would run before the worker confines itself
_BOOT = ("import sys; sys.path[:] = [{root!r}] + [p for p in sys.path if p not in ('', '.')]; "
         "from grader.worker import main; main()")


# ---- what a failed call raises here -------------------------------------------------------------------

class RemoteError(Exception):
    """An exception the student's code raised in the worker, as plain data: its type name, message, kind
    (todo, missing, exit, input, recursion, error) and the frames of the student's files."""

    def __init__(self, info: dict, function: str):
        super().__init__(info.get("message", ""))
        self.info, self.function = info, function

    @property
    def kind(self) -> str:
        return self.info.get("kind", "error")

    @property
    def frames(self) -> list[list]:
        return self.info.get("frames", [])


_REMOTE_TYPES: dict[str, type] = {}


def _remote_error(info: dict, function: str) -> RemoteError:
    """A RemoteError that is also the builtin exception it stands for (``except ValueError`` in a test works)."""
    name = info.get("type", "")
    base = getattr(builtins, name, None) if info.get("builtin") else None
    if not (isinstance(base, type) and issubclass(base, Exception)):
        return RemoteError(info, function)
    if name not in _REMOTE_TYPES:
        try:
            _REMOTE_TYPES[name] = type(f"Remote{name}", (RemoteError, base), {"__init__": RemoteError.__init__,
                                                                              "__str__": Exception.__str__})
        except TypeError:  # a builtin that cannot be subclassed together with RemoteError
            _REMOTE_TYPES[name] = RemoteError
    return _REMOTE_TYPES[name](info, function)


class CallTimeout(Exception):
    """A call ran past the check's time limit; the message says which function and where it was."""


class WorkerCrashed(Exception):
    """The worker ended in the middle of a call (os._exit, a crash, a resource limit)."""


class HungFunction(Exception):
    """A call of a function that already ran past the time limit in an earlier check: it fails at once."""


class BadAnswer(Exception):
    """The answer (or an argument the function changed) is not plain data; the message says what it was."""


# ---- the worker process -------------------------------------------------------------------------------

class _Channel:
    """The pipes to one worker: requests written to ``writer``, answers read from ``reader`` with a deadline (on
    POSIX directly from the pipe with select, elsewhere through a reading thread and a queue)."""

    def __init__(self, writer, reader):
        self.writer, self.reader = writer, reader
        self.pending = bytearray()  # bytes read from the pipe and not yet part of an answer
        self.answers: queue.Queue | None = None
        if os.name != "posix":  # no select() on Windows pipes
            self.answers = queue.Queue()
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                frame = wire.read_frame(self.reader)
            except (wire.WireError, OSError, ValueError) as exc:
                self.answers.put(exc)
                return
            self.answers.put(frame)
            if frame is None:
                return

    def send(self, payload: bytes) -> bool:
        try:
            wire.write_frame(self.writer, payload)
            return True
        except (OSError, ValueError):
            return False

    def receive(self, seconds: float):
        """The next answer (decoded), None when the worker ended, or TimeoutError."""
        if self.answers is not None:
            try:
                frame = self.answers.get(timeout=max(seconds, 0.0))
            except queue.Empty:
                raise TimeoutError from None
            if isinstance(frame, Exception):
                raise wire.WireError(str(frame))
        else:
            frame = self._frame(time.monotonic() + max(seconds, 0.0))
        return None if frame is None else wire.decode(frame)

    def _frame(self, deadline: float) -> bytes | None:
        head = wire.FRAME_HEAD.size
        if not self._fill(head, deadline):
            return None
        (n,) = wire.FRAME_HEAD.unpack_from(self.pending)
        if n > wire.MAX_FRAME + 64:
            raise wire.WireError(f"кадр длиной {n} байт больше предела")
        if not self._fill(head + n, deadline):
            raise wire.WireError("поток оборвался посреди кадра")
        frame = bytes(self.pending[head:head + n])
        del self.pending[:head + n]
        return frame

    def _fill(self, n: int, deadline: float) -> bool:
        """Read until ``n`` bytes are pending (True), or the pipe ends (False); TimeoutError past ``deadline``."""
        fd = self.reader.fileno()
        while len(self.pending) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
            chunk = os.read(fd, max(n - len(self.pending), 1 << 16))
            if not chunk:
                return False
            self.pending += chunk
        return True

    def close(self) -> None:
        for stream in (self.writer, self.reader):
            try:
                stream.close()
            except OSError:
                pass


class _Process(_Channel):
    """A worker started as a process of its own (``python -c``, confined by its command line)."""

    def __init__(self, cmd: list[str], env: dict, cwd: str, hello: bytes, fds: tuple[int, ...] = ()):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=cwd, env=env, start_new_session=True, pass_fds=fds)
        super().__init__(self.proc.stdin, self.proc.stdout)
        self.send(hello)

    def kill(self) -> None:
        try:
            if hasattr(os, "killpg"):
                os.killpg(self.proc.pid, 9)
            else:
                self.proc.kill()
        except (ProcessLookupError, PermissionError, OSError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.close()

    def exit_code(self) -> int | None:
        try:
            return self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return None


class _Forked(_Channel):
    """A worker forked by the zygote: its pipes were handed to it with the request; the zygote ends it."""

    def __init__(self, parent: zygote.Zygote, config: dict):
        request_r, request_w = os.pipe()
        answer_r, answer_w = os.pipe()
        try:
            self.pid = parent.fork(config, [request_r, answer_w, config["hang_fd"]])
        finally:
            for fd in (request_r, answer_w):
                os.close(fd)
        super().__init__(os.fdopen(request_w, "wb"), os.fdopen(answer_r, "rb", buffering=0))
        self.zygote = parent

    def kill(self) -> None:
        self.zygote.kill(self.pid)
        self.close()

    def exit_code(self) -> int | None:
        return self.zygote.wait(self.pid, 1.0)


@dataclass
class _Check:
    nodeid: str = ""
    title: str = ""
    seed: int | None = None
    deadline: float = float("inf")
    functions: list[str] = field(default_factory=list)
    mutated: list[tuple[str, str]] = field(default_factory=list)  # (function, parameter) it changed in place


@dataclass
class _Loaded:
    callables: frozenset
    notes: list[str]


class Session:
    """The implementation under test for one pytest session: where its files are, its worker, and the
    bookkeeping of modules that did not load and functions that hung."""

    def __init__(self, hw: Homework, source: Path, limit: float, timeout_hints: dict[str, str] | None = None):
        self.hw, self.source, self.limit = hw, Path(source).resolve(), float(limit)
        self.timeout_hints = timeout_hints or {}  # function -> what to look at when it runs past the limit
        self.provided = provided_modules(hw)
        self.test_modules = sorted(p.stem for p in hw.tests_dir.glob("*.py"))
        # the run's marker (the grader reaps the whole run by it) and this session's own under it: a worker
        # discarded here (a hang) never takes another part's worker with it
        self.token = f"{os.environ.get('HWKIT_RUN_TOKEN') or uuid.uuid4().hex}.{uuid.uuid4().hex[:12]}"
        self.confined = confine.namespaces_available()
        self.level = confine.NAMESPACES if self.confined else confine.LIMITS_ONLY
        self.zygote = zygote.for_session(hw, self.confined)  # workers forked by it, where it can (its folder
        # holds this session's, so that the zygote's file system view has it)
        self.tmp = Path(tempfile.mkdtemp(prefix="session-" if self.zygote else "hwgrade-",
                                         dir=str(self.zygote.base) if self.zygote else None))
        self.worker: _Channel | None = None  # a _Forked or a _Process
        self.ready = False
        self.loaded: dict[str, _Loaded] = {}
        self.load_errors: dict[str, ModuleLoadError] = {}
        self.hung: dict[tuple[str, str], str] = {}  # (module, function) -> title of the check it hung in
        self.notes: list[str] = []
        self.noted = False  # the notes were reported
        self.check = _Check()
        # the worker's stack dump when its watchdog fires: a file without a name, which the worker gets as a
        # descriptor and this process reads through its own (never a path the worker could replace by a link)
        self.hang: typing.IO[bytes] | None = None
        self.sources: dict[str, list[str]] = {}  # the submission's modules as staged: file name -> lines
        self.scratch: Path | None = None  # the running worker's working folder

    # ---- the parts of a check's life ------------------------------------------------------------------

    def begin_check(self, nodeid: str, title: str, seed: int) -> None:
        self.check = _Check(nodeid, title, seed, time.monotonic() + self.limit)

    def end_check(self) -> list[str]:
        functions, self.check = self.check.functions, _Check()
        return functions

    def close(self) -> None:
        if self.worker is not None:
            self.worker.send(pickle.dumps((0, ("bye",))))  # the worker ends its loop
            if self.worker.exit_code() is None:
                self.worker.kill()
            self.worker = None
        confine.reap(self.token)
        if self.hang is not None:
            self.hang.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ---- modules ----------------------------------------------------------------------------------------

    def module(self, name: str) -> "RemoteModule":
        """What a test's module fixture gets: a proxy of the student's module, loaded in the worker."""
        self.load(name)
        return RemoteModule(self, name)

    @staticmethod
    def import_provided(hw: Homework, name: str):
        """The kit's provided module (``envs``), imported here under its plain name: a submission's copy never is.
        Its objects then pickle by reference to ``envs``, which the worker imports from its scratch folder."""
        if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(provided_modules(hw)[name]):
            return sys.modules[name]
        path = provided_modules(hw)[name]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    def load(self, name: str) -> _Loaded:
        if name in self.load_errors:
            raise self.load_errors[name]
        self._start()
        if name in self.loaded:
            return self.loaded[name]
        try:
            answer = self._ask(("load", name, self.limit), self.limit)
        except TimeoutError:
            self._discard()
            error = ModuleLoadError(f"превышено время ({self.limit:g} с) при загрузке модуля {name}.py: похоже, на "
                                    "верхнем уровне модуля бесконечный цикл или долгий расчёт."
                                    + (f"\n{where}" if (where := self._where(None)) else ""))
        except WorkerCrashed as exc:
            error = ModuleLoadError(f"процесс проверки завершился при загрузке модуля {name}.py ({exc}): "
                                    "на верхнем уровне модуля вызван os._exit или интерпретатор упал. "
                                    "Уберите этот вызов из модуля: при импорте должны только определяться функции.")
        else:
            if _shape(answer, "loaded", 3) and all(type(c) is str for c in answer[1]):
                info = _Loaded(frozenset(answer[1]), [str(n) for n in answer[2]])
                self.loaded[name] = info
                self.notes += [n for n in info.notes if n not in self.notes]
                return info
            text = answer[1] if _shape(answer, "load-error", 2) and type(answer[1]) is str else "ответ не читается"
            error = ModuleLoadError(text)
        self.load_errors[name] = error
        raise error

    # ---- calls -------------------------------------------------------------------------------------------

    def call(self, module: str, function: str, args: tuple, kwargs: dict, repeat: int = 0, track: bool = True):
        """``function(*args, **kwargs)`` in the worker; an exception it ends with names the function
        (``.function``: in a check of several functions, the one whose call failed)."""
        try:
            return self._call(module, function, args, kwargs, repeat, track)
        except (HungFunction, MissingFunction, CallTimeout, WorkerCrashed, BadAnswer, RemoteError) as exc:
            exc.function = function
            raise

    def _call(self, module: str, function: str, args: tuple, kwargs: dict, repeat: int, track: bool):
        if (module, function) in self.hung:
            raise HungFunction(f"функция {function} не запускалась: "
                               f"она уже зависла в проверке «{self.hung[module, function]}» "
                               f"(превышено время, {self.limit:g} с). "
                               "Исправьте зацикливание, и эти проверки запустятся по-настоящему.")
        info = self.load(module)
        if function not in info.callables:
            raise MissingFunction(self._missing(module, function))
        if function not in self.check.functions:
            self.check.functions.append(function)
        seed, self.check.seed = self.check.seed, None
        seconds = self.check.deadline - time.monotonic() if self.check.nodeid else self.limit
        request = ("call", module, function, tuple(args), dict(kwargs), seed, max(seconds, 0.05), int(repeat),
                   bool(track))
        try:
            answer = self._ask(request, max(seconds, 0.05))
        except TimeoutError:
            where = self._where(function)
            self._discard()
            self.hung[module, function] = self.check.title or function
            hint = self.timeout_hints.get(function)
            raise CallTimeout(f"превышено время ({self.limit:g} с): функция {function} не вернула ответ. Нет ли "
                              "бесконечного цикла (while без выхода, условие остановки, которое не выполняется)?"
                              + (f"\n{where}" if where else "") + (f"\nПодсказка: {hint}" if hint else "")) from None
        except WorkerCrashed as exc:
            raise WorkerCrashed(f"процесс, выполнявший ваш код, завершился посреди вызова {function} ({exc}): ваш код "
                                "вызвал os._exit, завершил интерпретатор, упал или превысил предел памяти. "
                                "Остальные проверки продолжены в новом процессе.") from None
        return self._answer(answer, function, args, kwargs, track)

    def _tracked(self, args: tuple, kwargs: dict) -> set:
        """The arguments a call must send back as it left them: the mutable ones that are not the kit's objects
        (those come back as journals)."""
        kit = set(self.provided) | set(self.test_modules)
        return {k for k, v in [*enumerate(args), *kwargs.items()]
                if type(v).__module__ not in kit and _fingerprint(v) is not None}

    def _answer(self, answer, function: str, args: tuple, kwargs: dict, track: bool = True):
        if type(answer) is not tuple or len(answer) != 3 or answer[0] not in ("return", "raise", "unsendable"):
            self._discard()
            raise WorkerCrashed(f"ответ на вызов {function} не читается")
        kind, value, sync = answer
        if type(sync) is not dict:
            raise WorkerCrashed(f"ответ на вызов {function} не читается")
        expected = self._tracked(args, kwargs) if track and answer[0] != "unsendable" else set()
        missing = expected - set(sync.get("changed") or {}) - set(sync.get("journals") or {}) \
            - set(sync.get("unsendable") or {})
        if missing:  # the worker must show every mutable argument as it left it: "unchanged" is judged here
            self._discard()
            raise WorkerCrashed(f"ответ на вызов {function} пришёл без его аргументов")
        changed = _apply(sync, args, kwargs, function)
        names = sync.get("names") if type(sync.get("names")) is dict else {}
        self.check.mutated += [(function, str(names.get(k, k))) for k in changed]
        if kind == "return":
            return value
        if kind == "unsendable":
            raise BadAnswer(f"{function} вернула {printable(str(value))[:300]}. Проверка принимает только числа, "
                            "строки, None, списки, "
                            "кортежи, словари и np.ndarray из чисел: верните np.ndarray / float.")
        if type(value) is not dict:
            raise WorkerCrashed(f"ответ на вызов {function} не читается")
        if type(value.get("traceback")) is str:  # the student's files by their own path, not the scratch copy's
            folder = self.source.parent if self.source.is_file() else self.source
            value["traceback"] = value["traceback"].replace(str(self.scratch) + os.sep, str(folder) + os.sep)
        raise _remote_error(value, function)

    # ---- the worker's life ------------------------------------------------------------------------------

    def prepare(self) -> None:
        """Start the worker (or the zygote that forks it) now, without waiting: it boots while pytest collects."""
        if self.zygote is not None:
            self.zygote.start()
        elif self.worker is None:
            self._spawn()

    def _start(self) -> None:
        if self.worker is None:
            self._spawn()
        self._await_ready()

    def _spawn(self) -> None:
        scratch = self._fresh_scratch()
        hello = {"source": str(scratch / self.source.name) if self.source.suffix == ".ipynb" else str(scratch),
                 "scratch": str(scratch), "provided": sorted(self.provided), "hang_fd": self._fresh_hang_file(),
                 "kit_modules": sorted(set(self.provided) | set(self.test_modules)),
                 "import_path": [str(ROOT), str(self.hw.tests_dir)], "confined": self.confined,
                 "root_dir": str(self.tmp / "root"), "visible": zygote.visible(self.hw)}
        (self.tmp / "root").mkdir(exist_ok=True)
        self.ready = False
        if self.zygote is not None and self.zygote.confined == self.confined:
            try:
                self.worker = _Forked(self.zygote, hello)
                return
            except zygote.ZygoteGone:
                self.zygote = None  # started as a process of its own from now on
        # -s: no user site; -B: no bytecode written; the environment is the clean one of confine.environment
        cmd = confine.command(["-s", "-B", "-c", _BOOT.format(root=str(ROOT))], self.confined)
        self.worker = _Process(cmd, confine.environment(self.token), str(scratch), pickle.dumps(hello),
                               (hello["hang_fd"],))

    def _fresh_hang_file(self) -> int:
        if self.hang is not None:
            self.hang.close()
        self.hang = tempfile.TemporaryFile(dir=str(self.tmp))  # unlinked at once (O_TMPFILE where there is one)
        return self.hang.fileno()

    def _hang_dump(self, limit: int = 1 << 20) -> str:
        """What the worker's watchdog wrote (at most ``limit`` bytes), read through this process's descriptor."""
        if self.hang is None:
            return ""
        try:
            return os.pread(self.hang.fileno(), limit, 0).decode("utf-8", errors="replace")
        except OSError:
            return ""

    def _await_ready(self) -> None:
        if self.ready:
            return
        try:
            ready = self.worker.receive(START_LIMIT)
        except (TimeoutError, wire.WireError):
            ready = None
        if not _shape(ready, "ready", 2):
            self._discard()
            if self.confined:  # namespaces that probe fine but fail in earnest: grade without them
                self.confined, self.level = False, confine.LIMITS_ONLY
                return self._start()
            raise RuntimeError("процесс для проверки вашего кода не запустился")
        self.level, self.ready = str(ready[1]), True

    def _fresh_scratch(self) -> Path:
        """A scratch folder with the submission's modules (the kit's own provided modules over any copy)."""
        if self.scratch is not None:  # the last worker's (gone now): never reused, so never a link it left there
            shutil.rmtree(self.scratch, ignore_errors=True)
        os.chmod(self.tmp, 0o711)  # a worker run as nobody reaches its scratch folder and nothing else here
        scratch = self.scratch = Path(tempfile.mkdtemp(prefix="work-", dir=str(self.tmp)))  # a new name each time
        self.sources = {}
        os.chmod(scratch, 0o777)
        if self.source.is_file():
            shutil.copy2(self.source, scratch / self.source.name)
        elif self.source.is_dir():
            for entry in self.source.iterdir():
                if entry.name in _IGNORED or entry.name.startswith(".") or entry.is_symlink():
                    continue  # a link could point at the reference solutions: only the submission's own files
                if entry.is_file() and entry.suffix == ".py" and entry.stem not in self.provided:
                    shutil.copy2(entry, scratch / entry.name)  # before any worker: read back as written here
                    text = (scratch / entry.name).read_bytes()[:1 << 20].decode("utf-8", errors="replace")
                    self.sources[entry.name] = text.splitlines()
                elif entry.is_dir() and (entry / "__init__.py").is_file():
                    shutil.copytree(entry, scratch / entry.name, symlinks=True, ignore=_no_links)
        for name, path in self.provided.items():
            shutil.copy2(path, scratch / f"{name}.py")
        return scratch

    def _discard(self) -> None:
        if self.worker is not None:
            self.worker.kill()
            self.worker = None
        self.loaded.clear()
        confine.reap(self.token)

    def _ask(self, request: tuple, seconds: float):
        """Send a request and wait for its answer. Each request carries a fresh number that its answer must repeat:
        an answer written before the request was made (a student's thread writing into the pipe) is no answer."""
        number = secrets.randbits(63)
        try:
            payload = pickle.dumps((number, request), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:  # the check's own mistake
            raise RuntimeError(f"проверка не смогла передать аргументы в процесс с вашим кодом: {exc}") from None
        worker = self.worker
        if worker is None or not worker.send(payload):
            code = worker.exit_code() if worker else None
            self._discard()
            raise WorkerCrashed(f"код {code}")
        try:
            answer = worker.receive(seconds + GRACE)
        except TimeoutError:
            raise
        except wire.WireError as exc:
            self._discard()
            raise WorkerCrashed(f"ответ не читается: {exc}") from None
        if answer is None:
            code = worker.exit_code()
            if code == 1 and self.hang is not None and os.fstat(self.hang.fileno()).st_size:  # its watchdog fired
                raise TimeoutError
            self._discard()
            raise WorkerCrashed(f"код {code}")
        if type(answer) is not tuple or not answer or answer[0] != number:
            self._discard()
            raise WorkerCrashed("ответ пришёл не на этот вызов")
        return answer[1:]

    # ---- words ---------------------------------------------------------------------------------------------

    def _missing(self, module: str, function: str) -> str:
        if self.source.suffix == ".ipynb":
            return (f"в тетрадке не определено «{function}»: выполните ячейку с этой функцией (и ячейки выше) или "
                    "проверьте, что имя написано так же, как в задании")
        return f"в {module}.py нет функции «{function}»: проверьте, что имя написано так же, как в задании"

    def _where(self, function: str | None) -> str:
        """Where the student's code was when the watchdog fired, from the worker's stack dump."""
        dump = self._hang_dump()
        scratch = str(self.scratch)
        own = []  # the student's frames, innermost first (faulthandler prints the most recent call first)
        blocks = re.split(r"\n(?=(?:Current thread|Thread) )", dump)
        main = next((b for b in blocks if re.search(r'worker\.py", line \d+ in main', b)), dump)  # the requests' thread
        for match in _FRAME.finditer(main):
            filename, line, func = match.group(1), int(match.group(2)), match.group(3)
            if filename.startswith("<"):
                name = filename.encode("ascii", "backslashreplace").decode("unicode_escape")
                if name.startswith("<ячейка"):
                    own.append((name[1:-1], line, func, ""))
                continue
            name = Path(filename).name
            if os.path.dirname(filename) == scratch and name in self.sources:  # a module of the submission's
                lines = self.sources[name]
                code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
                own.append((name, line, func, printable(code)[:200]))
        if not own:
            return ""
        name, line, func, code = own[0]
        what = "верхний уровень модуля" if func == "<module>" else f"функция {func}"
        text = f"В этот момент выполнялась {what} ({name}, строка {line})" + (f": «{code}»" if code else "")
        if function and func != function and any(f[2] == function for f in own):
            text += f", вызванная из {function}"
        return text + "."


_FRAME = re.compile(r'File "(.+)", line (\d+) in (\S+)')


def _no_links(folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n in _IGNORED or os.path.islink(os.path.join(folder, n))}


def _shape(answer, tag: str, n: int) -> bool:
    return type(answer) is tuple and len(answer) == n and answer[0] == tag


def provided_modules(hw: Homework) -> dict[str, Path]:
    """The homework's provided modules (every module of homework/<hw>/ that is not a part's), from the kit."""
    found = {}
    for folder in (hw.homework_dir, hw.solutions_dir):
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
            if path.stem not in hw.modules:
                found[path.stem] = path  # solutions/ (the single source), when the kit has it, wins
    return found


# ---- what a call did to its arguments -------------------------------------------------------------------

def _fingerprint(value) -> bytes | None:
    """Bytes that change when a mutable argument of the test's changes (None for what a call cannot change, or
    what this process cannot compare); the worker tracks the same arguments (grader.worker._fingerprint)."""
    if not isinstance(value, (np.ndarray, list, dict, np.random.Generator, bytearray, tuple)):
        return None
    try:
        if isinstance(value, np.random.Generator):
            return repr(value.bit_generator.state).encode()
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)  # the test's own objects, or plain data
    except Exception:  # noqa: BLE001
        return None


def _apply(sync: dict, args: tuple, kwargs: dict, function: str) -> list:
    """Replay the journals on the test's environments, then copy the arguments the call changed into the test's
    objects; return the keys of those that changed (compared here)."""
    slots = {**dict(enumerate(args)), **kwargs}
    for key, journal in (sync.get("journals") or {}).items():
        if key in slots and type(journal) is wire.Journal:
            _replay_when_used(slots[key], journal)
    for message in (sync.get("unsendable") or {}).values():
        raise BadAnswer(f"{function} изменила свой аргумент и положила в него {message}")
    changed = []
    for key, value in (sync.get("changed") or {}).items():
        if key in slots and _fingerprint(slots[key]) != _fingerprint(value):
            _merge(slots[key], value)
            changed.append(key)
    return changed


# The journal is a closed protocol: the environment API's own calls, on the environment or its spaces, nothing else
# (no attribute paths into its data, no other method: a journal that names one is refused whole)
_SPACE_METHODS = frozenset({"sample", "seed", "contains"})
JOURNAL_CALLS = frozenset({((), "reset"), ((), "step")}
                          | {((space,), m) for space in ("action_space", "observation_space") for m in _SPACE_METHODS})
REPLAY_LIMIT = 30.0  # s for replaying one journal in this process


def _replay(root, journal: wire.Journal) -> None:
    """Make on ``root`` (an environment of the test) the method calls the student's code made on its copy."""
    try:
        entries = list(journal.entries())
    except wire.WireError as exc:
        raise WorkerCrashed(f"журнал вызовов среды не читается: {exc}") from None
    refused = next(((p, n) for p, n, _, _ in entries if (tuple(p), n) not in JOURNAL_CALLS), None)
    if refused is not None:
        raise WorkerCrashed("в журнале вызовов среды — вызов не из API среды: "
                            + printable(".".join([*map(str, refused[0]), str(refused[1])]))[:80])
    deadline = time.monotonic() + REPLAY_LIMIT
    for i, (path, name, args, kwargs) in enumerate(entries):
        if i % 1024 == 0 and time.monotonic() > deadline:
            raise WorkerCrashed(f"журнал вызовов среды не повторить за {REPLAY_LIMIT:g} с")
        target = getattr(root, path[0]) if path else root
        getattr(target, name)(*args, **{_public(k): v for k, v in kwargs.items()})


_PENDING: dict[type, type] = {}


def _replay_when_used(env, journal: wire.Journal) -> None:
    """Replay ``journal`` on ``env`` the first time the test touches ``env`` again (reads an attribute, calls a
    method, passes it to another call): a run of 500 episodes whose environment no test looks at afterwards
    costs no replay. An object whose class cannot be swapped is replayed at once."""
    cls = type(env)
    if cls not in _PENDING:
        def __getattribute__(self, name):
            if name == "__class__":
                return cls
            pending = object.__getattribute__(self, "_hwkit_pending")
            object.__setattr__(self, "__class__", cls)
            object.__delattr__(self, "_hwkit_pending")
            _replay(self, pending)
            return getattr(self, name)

        _PENDING[cls] = type(cls.__name__, (cls,), {"__getattribute__": __getattribute__,
                                                     "__module__": cls.__module__, "__qualname__": cls.__qualname__})
    try:
        object.__setattr__(env, "_hwkit_pending", journal)
        object.__setattr__(env, "__class__", _PENDING[cls])
    except (TypeError, AttributeError):  # __slots__, a builtin: no deferring
        _replay(env, journal)


def _public(name) -> str:
    if type(name) is not str or not name.isidentifier() or name.startswith("_"):
        raise WorkerCrashed("журнал вызовов среды не читается")
    return name


def _merge(orig, new):
    """Make ``orig`` equal to ``new`` in place where it is mutable; return what should stand in its place."""
    if isinstance(orig, np.ndarray) and type(new) is np.ndarray and orig.shape == new.shape and orig.flags.writeable:
        np.copyto(orig, new, casting="unsafe")
        return orig
    if isinstance(orig, np.random.Generator) and type(new) is np.random.Generator:
        if type(orig.bit_generator) is type(new.bit_generator):
            orig.bit_generator.state = new.bit_generator.state
            return orig
        return new
    if type(orig) is list and type(new) is list:
        orig[:] = [_merge(o, n) for o, n in zip(orig, new)] + new[len(orig):]
        return orig
    if type(orig) is dict and type(new) is dict:
        for key in [k for k in orig if k not in new]:
            del orig[key]
        for key, value in new.items():
            orig[key] = _merge(orig[key], value) if key in orig else value
        return orig
    if isinstance(orig, tuple) and type(new) is tuple and len(orig) == len(new):
        for o, n in zip(orig, new):
            _merge(o, n)
        return orig
    return new


class RemoteModule:
    """Stands for a student's module in a graded test: ``module.f(...)`` calls ``f`` in the worker."""

    def __init__(self, session: Session, name: str):
        self._session, self.__name__ = session, name
        self._functions: dict[str, RemoteFunction] = {}

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        info = self._session.load(self.__name__)
        if name not in info.callables:
            raise MissingFunction(self._session._missing(self.__name__, name))
        if name not in self._functions:
            self._functions[name] = RemoteFunction(self._session, self.__name__, name)
        return self._functions[name]

    def __repr__(self) -> str:
        return f"<модуль {self.__name__} (в отдельном процессе)>"


class RemoteFunction:
    def __init__(self, session: Session, module: str, name: str):
        self._session, self._module, self.__name__ = session, module, name

    def __call__(self, *args, **kwargs):
        return self._session.call(self._module, self.__name__, args, kwargs)

    def repeat(self, n: int, *args, **kwargs) -> list:
        """``[f(*args, **kwargs) for _ in range(n)]``, run in the worker as one request."""
        return self._session.call(self._module, self.__name__, args, kwargs, repeat=n)

    def untracked(self, *args, **kwargs):
        """``f(*args, **kwargs)`` on arguments the check made for this call only and never looks at again: what the
        call did to them (an environment's journal of 13 000 steps) is neither recorded nor sent back."""
        return self._session.call(self._module, self.__name__, args, kwargs, track=False)

    def __repr__(self) -> str:
        return f"<функция {self._module}.{self.__name__} (в отдельном процессе)>"
