"""The worker: the only process that runs a submission's code.

Started by :mod:`grader.boundary.link` as ``python -s -B -c "...main()"``, confined by :mod:`confine`. It reads
requests from the grading process (pickled tuples: trusted) and answers with plain data encoded by
:mod:`grader.boundary.wire` (everything it sends is treated as the student's answer, never as a verdict):

- ``("load", name, seconds)``: import the submission's module ``name`` (or run a notebook's code cells);
  answer ``("loaded", callables, notes)`` or ``("load-error", message)``.
- ``("call", module, function, args, kwargs, seed, seconds, repeat, track)``: call it (``repeat`` times, when
  given); answer ``("return", value, sync)``, ``("raise", error, sync)`` or ``("unsendable", what, sync)``.
  ``sync`` describes what the call did to its arguments: the new value of each argument it changed, and the
  journal of method calls made on the kit's objects (environments), which the grading process replays on its own
  copies; empty when ``track`` is false (the check made the arguments for this call only). ``sync["entered"]``:
  the submission's other top-level functions the call went through (the feedback tells "f calls g" from it).
- ``("bye",)``: end.

Each request comes as ``(number, request)`` and its answer repeats the number. Each request runs under a
watchdog thread: past its ``seconds`` (a pair: the process's CPU time, and a wall-clock backstop), faulthandler
writes every thread's stack to the hang file and the process exits; the grading process reads where the code was.
(The grading process enforces the limits itself too, from the kernel's count of this process's CPU time.)
"""
from __future__ import annotations

import inspect
import io
import os
import pickle
import random
import sys
import time
import traceback

import numpy as np

from grader.boundary import wire
from grader.boundary.hang import Watchdog
from grader.boundary.journal import is_kit, record
from grader.boundary.loading import FolderImplementation, MissingFunction, ModuleLoadError, NotebookImplementation
from grader.boundary.tracing import Entered, room_for_tracing

_MUTABLE = (np.ndarray, list, dict, np.random.Generator, bytearray)


class Worker:
    def __init__(self, config: dict, hang_file):
        self.config = config
        self.kit = frozenset(config["kit_modules"])
        source = config["source"]
        self.impl = NotebookImplementation(source) if source.endswith(".ipynb") else FolderImplementation(source)
        self.provided = set(config["provided"])
        self.entered = Entered()  # the submission's functions each call went through
        self.room = room_for_tracing()  # for the process's life: each traced call is two frames
        self.room.__enter__()
        self.watchdog = Watchdog(hang_file)
        self.watchdog.entered = self.entered
        self.watchdog.start()

    # ---- requests ---------------------------------------------------------------------------------

    def load(self, name: str, seconds: tuple):
        self._arm(seconds)
        try:
            module = self.impl.module(name)
        except ModuleLoadError as exc:
            return ("load-error", str(exc))
        finally:
            self._disarm()
        callables = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("__"))
        return ("loaded", callables, list(getattr(self.impl, "cell_errors", [])))

    def call(self, module: str, function: str, args: tuple, kwargs: dict, seed, seconds: tuple, repeat: int = 0,
             track: bool = True):
        if seed is not None:  # a new check: the global generators as the check's seed makes them
            random.seed(seed)
            np.random.seed(seed)
        journals: dict = {}
        before: dict = {}
        if track:
            args = [self._guest(a, i, journals) for i, a in enumerate(args)]
            kwargs = {k: self._guest(v, k, journals) for k, v in kwargs.items()}
            before = {**{i: _fingerprint(a) for i, a in enumerate(args)},
                      **{k: _fingerprint(v) for k, v in kwargs.items()}}
        args = list(args)
        self._arm(seconds)
        self.entered.clear()
        try:
            func = getattr(self.entered.trace(self.impl.module(module), self._wrote), function)
            names = _parameter_names(func)
            if repeat:  # many calls with the same arguments, one request: ε-greedy drawn 20 000 times
                value = [func(*args, **kwargs) for _ in range(repeat)]
            else:
                value = func(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - whatever the student's code raises is reported
            self._disarm()
            return ("raise", self._error(exc), self._sync(args, kwargs, before, journals, locals().get("names"),
                                                          function))
        self._disarm()
        return ("return", value, self._sync(args, kwargs, before, journals, names, function))

    def _wrote(self, func) -> bool:
        """Whether the student wrote ``func`` (it was compiled from the submission's files or cells)."""
        return self._is_students(func.__code__.co_filename)

    def _guest(self, value, key, journals: dict):
        if is_kit(value, self.kit):
            journals[key] = []
            record(value, journals[key], (), self.kit)
        return value

    def _sync(self, args: list, kwargs: dict, before: dict, journals: dict, names: list | None,
              function: str) -> dict:
        """Every mutable argument as it is after the call (with their parameter names; the checking process
        compares them with its own: it never takes this process's word that nothing changed) and the journals of
        the kit's objects."""
        changed = {}
        for key, value in [*enumerate(args), *kwargs.items()]:
            if key in journals or before.get(key) is None:
                continue
            changed[key] = value
        named = {k: names[k] if isinstance(k, int) and names and k < len(names) else str(k) for k in changed}
        return {"changed": changed, "names": named, "journals": {k: wire.Journal(j) for k, j in journals.items()},
                "entered": self.entered.take(function)}

    def _error(self, exc: BaseException) -> dict:
        frames = [[f.filename, f.lineno, f.name, (f.line or "").strip()]
                  for f in traceback.extract_tb(exc.__traceback__)]
        own = [f for f in frames if self._is_students(f[0])]
        if isinstance(exc, MissingFunction):
            kind = "missing"
        elif isinstance(exc, NotImplementedError):
            kind = "todo"
        elif isinstance(exc, SystemExit):
            kind = "exit"
        elif isinstance(exc, (EOFError, KeyboardInterrupt)):
            kind = "input" if isinstance(exc, EOFError) else "error"
        elif isinstance(exc, RecursionError):
            kind = "recursion"
        else:
            kind = "error"
        message = repr(exc.code) if isinstance(exc, SystemExit) else _safe_str(exc)
        shown = traceback.format_list([traceback.FrameSummary(f, n, name, line=code) for f, n, name, code in own[-20:]])
        text = "".join(["Traceback (most recent call last):\n", *shown,
                        *traceback.format_exception_only(type(exc), exc)])
        base = next((c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"), "")  # class ValueError(...)
        return {"type": type(exc).__name__, "base": base, "message": message,
                "kind": kind, "frames": own[-20:], "traceback": text[-8000:]}

    def _is_students(self, filename: str) -> bool:
        if filename.startswith("<ячейка"):
            return True
        folder = self.config["scratch"]
        name = os.path.basename(filename)
        return (os.path.dirname(os.path.abspath(filename)) == folder and name.endswith(".py")
                and name[:-3] not in self.provided)

    # ---- the watchdog --------------------------------------------------------------------------------

    def _arm(self, seconds: tuple) -> None:
        self.watchdog.arm(float(seconds[0]), float(seconds[1]))

    def _disarm(self) -> None:
        self.watchdog.disarm()


def _parameter_names(func) -> list[str]:
    try:
        return list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return []


def _safe_str(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a student's exception class may break str()
        text = ""
    return text[:2000]


def _fingerprint(value):
    """Bytes that change when a mutable argument changes (None for values a call cannot change)."""
    if not isinstance(value, _MUTABLE):
        if not isinstance(value, tuple):
            return None
    try:
        if isinstance(value, np.random.Generator):
            return repr(value.bit_generator.state)
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001
        return None


def _reply(out, number: int, message: tuple) -> None:
    """Send ``message`` as the answer to request ``number`` (or say what in it could not be sent)."""
    try:
        payload = wire.encode((number, *message))
    except wire.Unsendable as exc:  # say what could not be sent instead
        kind, *rest = message
        if kind in ("return", "raise"):
            value, sync = rest
            sync = _plain_sync(sync)
            try:
                payload = wire.encode((number, kind, value, sync))
            except wire.Unsendable as bad:  # the answer itself is not plain data
                payload = wire.encode((number, "unsendable", str(bad), sync))
        else:
            payload = wire.encode((number, "unsendable", str(exc), {"changed": {}, "journals": {}, "unsendable": {}}))
    wire.write_frame(out, payload)


def _plain_sync(sync: dict) -> dict:
    """``sync`` without the values that cannot be sent (they are reported as such)."""
    plain: dict = {"changed": {}, "journals": {}, "unsendable": {}, "names": sync.get("names", {}),
                   "entered": sync.get("entered", [])}
    for part in ("changed", "journals"):
        for key, value in sync[part].items():
            try:
                wire.encode(value)
                plain[part][key] = value
            except wire.Unsendable as exc:
                plain["unsendable"][key] = str(exc)
    return plain


def _private_streams():
    """The protocol gets private copies of stdin and stdout; the student's code sees /dev/null on 0, 1 and 2."""
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")  # input() meets the end of input at once
    sys.stdout = open(os.devnull, "w", encoding="utf-8")
    sys.stderr = open(os.devnull, "w", encoding="utf-8")
    return proto_in, proto_out


def main() -> None:
    """A worker started on its own (``python -c``): its configuration comes first on its standard input."""
    proto_in, proto_out = _private_streams()
    config = pickle.loads(wire.read_frame(proto_in))
    from grader.boundary import confine

    hang_file = os.fdopen(config["hang_fd"], "w", encoding="utf-8")  # a descriptor from the checking process
    level = confine.enter(config)  # the file system view, limits; before any student code runs
    _serve(config, hang_file, proto_in, proto_out, level)


def _serve(config: dict, hang_file, proto_in, proto_out, level: str) -> None:
    """Answer requests until the grading process says bye or closes the pipe; then end the process."""
    from grader.boundary import confine

    hidden = bool(config.get("hidden"))
    if hidden:  # a worker of hidden checks: what it creates is its user's only, and stays so (no_new_processes)
        os.umask(0o077)
    if confine.no_new_processes(hidden):  # before any of the submission's code runs: threads only, no process
        level += "; без новых процессов, сокетов и IPC"
    sys.path[:0] = [config["scratch"], *config["import_path"]]
    os.chdir(config["scratch"])
    worker = Worker(config, hang_file)
    wire.write_frame(proto_out, wire.encode(("ready", level)))
    while True:
        frame = wire.read_frame(proto_in)
        if frame is None:
            break
        number, request = pickle.loads(frame)
        if request[0] == "load":
            _reply(proto_out, number, worker.load(*request[1:]))
        elif request[0] == "call":
            _reply(proto_out, number, worker.call(*request[1:]))
        else:
            break
    os._exit(0)


# ---- the zygote: workers by fork, without paying Python's and NumPy's start-up each time ----------------

def zygote() -> None:
    """A confined process that has imported what a worker needs and nothing of the submission's, and forks a
    worker for each request of the grading process. Requests come over a Unix socket (``control_fd``), each with
    three descriptors: the worker's request pipe, its answer pipe and its hang file. Requests (pickled: trusted):
    ``("fork", config)`` → ``("forked", pid)``; ``("kill", pid)`` (its process group) → ``("killed", code)``;
    ``("wait", pid, seconds)`` → ``("status", code or None)``; ``("cpu", pid)`` → ``("cpu", seconds, queued)`` or
    ``("cpu", None, None)``: the CPU time of the worker's every thread and the time its main thread waited for a
    CPU, as the kernel counts them (a worker cannot forge them as it could forge its own clocks). Answers are plain
    data (grader.boundary.wire). The zygote ends when every holder of the socket has closed it; as the first process
    of its PID namespace, it takes every worker with it."""
    import signal
    import socket

    proto_in, proto_out = _private_streams()
    config = pickle.loads(wire.read_frame(proto_in))
    from grader.boundary import confine

    level = confine.enter(config)
    confine.not_dumpable()  # this module's imports (NumPy, wire, loading) are every forked worker's
    control = socket.socket(fileno=config["control_fd"])
    ended: dict[int, int] = {}
    wire.write_frame(proto_out, wire.encode(("ready", level)))
    proto_in.close()
    proto_out.close()
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 1 << 20, 3)
        except OSError:
            break
        if not message:
            break
        request = pickle.loads(message)
        if request[0] == "fork":
            answer = _fork_worker(request[1], fds, control, level)
        elif request[0] == "kill":
            try:
                os.killpg(request[1], signal.SIGKILL)
            except OSError:
                pass
            answer = ("killed", _wait(request[1], 5.0, ended))
        elif request[0] == "wait":
            answer = ("status", _wait(request[1], float(request[2]), ended))
        elif request[0] == "cpu":
            answer = ("cpu", *(process_cpu(request[1]) or (None, None)))
        else:
            answer = ("unknown",)
        _reap(ended)
        control.send(wire.encode(answer))
    os._exit(0)


def _fork_worker(config: dict, fds: list[int], control, level: str) -> tuple:
    """The zygote's answer to ``("fork", config)``: a worker forked, which leaves the zygote's socket, takes a
    session of its own and serves ``config``'s requests on the three descriptors ``fds`` (request pipe, answer pipe,
    hang file) until it ends; here, the descriptors closed."""
    try:
        pid = os.fork()
    except OSError:  # a process limit: the grading process starts that worker on its own
        pid = -1
    if pid == 0:
        control.close()
        os.setsid()
        try:
            _serve(config, os.fdopen(fds[2], "w", encoding="utf-8"), os.fdopen(fds[0], "rb", buffering=0),
                   os.fdopen(fds[1], "wb"), level)
        finally:
            os._exit(70)
    for fd in fds:
        os.close(fd)
    return ("forked", pid) if pid > 0 else ("fork-failed",)


def process_cpu(pid: int) -> tuple[float, float] | None:
    """(user and system CPU time of process ``pid`` and all its threads, the time its main thread has waited on a
    run queue), from /proc (None where there is none)."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # after the name, which may hold anything
        with open(f"/proc/{int(pid)}/schedstat", "rb") as f:
            queued = int(f.read().split()[1]) / 1e9
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), queued
    except (OSError, ValueError, IndexError):
        return None


def _wait(pid: int, seconds: float, ended: dict) -> int | None:
    """The exit code of the zygote's child ``pid`` (−signal when killed), waiting up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        if pid in ended:
            return ended[pid]
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return ended.get(pid)
        if done:
            ended[pid] = os.waitstatus_to_exitcode(status)
            return ended[pid]
        if time.monotonic() > deadline:
            return None
        time.sleep(0.002)


def _reap(ended: dict) -> None:
    """Collect every child that has ended (workers, and processes they left behind, reparented here)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return
        ended[pid] = os.waitstatus_to_exitcode(status)
