"""The checking template: one process per batch that pays Python's, pytest's and NumPy's start-up once and forks the
checking processes (a warm start).

Cold, each checking process is ``python -m pytest <test files> ...`` (grader/runner.py): Python, NumPy, pytest and
the grader are imported again for every submission. Warm, a batch starts one template (``python -c``, by exec) that
imports them, the grader's plugin and pytest's own plugins, and nothing of any test file or of the answer key; for
each checking process the runner would start, the template forks a child that takes the request's command line,
working folder, standard streams and environment (the whole of it: ``HWKIT_INPUTS``, ``HWKIT_SECRET_FILE``,
``HWKIT_CONFINE``, the worker's uid and the run's token come per request, never from whoever started the template)
and runs ``pytest.main`` in it: collection, the test modules and the answer key are the child's own, as in a cold
process. Like a checking process, the template may hold the key: it is part of the checking side. No worker is ever
forked from it: workers come from the zygotes, which are started by exec (grader/boundary/zygote.py), so the
boundary is the cold path's.

The protocol (a Unix SEQPACKET socket, pickles both ways: both ends are the grader's): ``("run", argv, cwd, env,
targets)`` with the descriptors of the child's stdin, stdout, stderr, its status socket and the ``pass_fds``
(re-numbered in the child to ``targets``, their numbers in the runner's process) → ``("forked", pid)``. The template
reaps its children and writes each one's exit code to its status socket. Linux only (:func:`available`); anywhere
else, or with ``HWKIT_WARM=off``, or when the template is gone, a checking process is started cold.
"""
from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import threading

from grader.homeworks import ROOT

WARM_ENV = "HWKIT_WARM"  # "off": every checking process started cold (the kit's tests compare both paths)
START_LIMIT = 60.0  # s for the template to import what it holds
_BOOT = ("import sys; sys.path[:] = [{root!r}] + [p for p in sys.path if p not in ('', '.')]; "
         "from grader.warm import serve; serve({fd})")
_CODE = struct.Struct("<i")
_HIGH = 1 << 12  # where a child moves its passed descriptors while it closes the rest


class TemplateGone(Exception):
    """The template did not start or no longer answers: the checking process is started cold."""


def available() -> bool:
    """Linux only (a process that has loaded NumPy must not fork without exec on macOS, and Windows has no fork);
    ``HWKIT_WARM=off``: nowhere."""
    if os.environ.get(WARM_ENV, "").lower() in ("off", "0", "no"):
        return False
    return sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(socket, "send_fds")


class Process:
    """A checking process forked by the template, as much of ``subprocess.Popen`` as the runner uses: ``pid`` (the
    leader of a session of its own: its group is killed whole), ``stdin``, ``stdout``, ``kill()``, ``poll()``,
    ``wait()``. Its exit code comes from the template, which reaps it (a pid it has not reaped is never reused)."""

    def __init__(self, pid: int, stdin, stdout, status: socket.socket):
        self.pid, self.stdin, self.stdout, self.status = pid, stdin, stdout, status
        self.returncode: int | None = None
        self.args = ["pytest (warm)"]

    def poll(self) -> int | None:
        return self.wait(0.0) if self.returncode is None else self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is not None:
            return self.returncode
        if not select.select([self.status], [], [], timeout)[0]:
            if timeout is None:
                return None
            raise subprocess.TimeoutExpired(self.args, timeout)
        data = self.status.recv(_CODE.size)
        if len(data) == _CODE.size:
            self.returncode = _CODE.unpack(data)[0]
        else:  # the template is gone: this process is no longer its child, and is ended now
            self.kill()
            self.returncode = -signal.SIGKILL
        self.status.close()
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)


class Template:
    """The template process and its control socket; :meth:`run` forks a checking process."""

    def __init__(self, env: dict[str, str]):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.lock = threading.Lock()  # the grader's threads ask at once: one request and its answer at a time
        self.ready: bool | None = None
        try:
            self.proc = subprocess.Popen([sys.executable, "-c", _BOOT.format(root=str(ROOT), fd=theirs.fileno())],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, cwd="/", env=env, start_new_session=True,
                                         pass_fds=(theirs.fileno(),))
        except OSError:
            self.proc, self.ready = None, False
        theirs.close()
        self.control = ours

    def _answer(self, limit: float):
        self.control.settimeout(limit)
        try:
            data = self.control.recv(1 << 16)
            return pickle.loads(data) if data else None
        except (OSError, pickle.UnpicklingError, EOFError):
            return None

    def run(self, cmd: list[str], cwd: str, env: dict[str, str], stderr, pass_fds: tuple[int, ...] = ()) -> Process:
        """Fork a checking process running ``cmd`` (``python -m pytest ARGS``) in ``cwd`` with exactly ``env``, its
        stdin and stdout pipes to this process, its stderr the file ``stderr``, and ``pass_fds`` under their numbers
        here; :class:`TemplateGone` when the template cannot."""
        if cmd[:3] != [sys.executable, "-m", "pytest"]:
            raise ValueError(f"not a checking process: {cmd[:3]}")
        with self.lock:
            if self.ready is None:
                answer = self._answer(START_LIMIT)
                self.ready = answer == ("ready",)
            if not self.ready:
                self.stop()
                raise TemplateGone
            stdin_r, stdin_w = os.pipe()
            stdout_r, stdout_w = os.pipe()
            status, status_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            fds = [stdin_r, stdout_w, stderr.fileno(), status_theirs.fileno(), *pass_fds]
            try:
                socket.send_fds(self.control, [pickle.dumps(("run", cmd[3:], cwd, env, list(pass_fds)))], fds)
                answer = self._answer(START_LIMIT)
            except OSError:
                answer = None
            finally:
                for fd in (stdin_r, stdout_w):
                    os.close(fd)
                status_theirs.close()
            if not (type(answer) is tuple and len(answer) == 2 and answer[0] == "forked" and type(answer[1]) is int):
                for fd in (stdin_w, stdout_r):
                    os.close(fd)
                status.close()
                self.ready = False
                self.stop()
                raise TemplateGone
        return Process(answer[1], os.fdopen(stdin_w, "wb"), os.fdopen(stdout_r, "rb"), status)

    def stop(self) -> None:
        """End the template (it ends when its control socket closes; its running children are not its to end)."""
        if self.control is not None:
            self.control.close()
            self.control = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            self.proc = None


_CURRENT: list[Template] = []


def current() -> Template | None:
    """The template of the batch running in this process, if any."""
    return _CURRENT[-1] if _CURRENT else None


@contextlib.contextmanager
def template(env: dict[str, str]):
    """A checking template for the block (None where :func:`available` says no), started with ``env``; the runner's
    checking processes are forked by it meanwhile (grader.runner._follow)."""
    if not available():
        yield None
        return
    held = Template(env)
    _CURRENT.append(held)
    try:
        yield held
    finally:
        _CURRENT.remove(held)
        held.stop()


# ---- the template's side ------------------------------------------------------------------------------------

def _preload() -> None:
    """What every checking process imports before its first test file: NumPy, pytest and its own plugins, the
    grader's plugin and what it imports. No test file, conftest or answer key: those read the request's inputs and
    secret when they are imported (grader.hidden), so each child collects them itself."""
    import importlib

    import numpy  # noqa: F401
    import pytest  # noqa: F401
    from _pytest.config import default_plugins

    for name in default_plugins:
        with contextlib.suppress(ImportError):
            importlib.import_module(f"_pytest.{name}")
    import grader.checks  # noqa: F401
    import grader.plugin  # noqa: F401


def serve(fd: int) -> None:
    """The template: import, say ready, then fork a checking process for each request until the socket closes."""
    from grader.boundary import confine

    sys.argv = ["pytest (the checking template)"]
    confine.not_dumpable()  # like every process of the checking side: no other process of its user reads it
    _preload()
    control = socket.socket(fileno=fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}  # pid -> its status socket
    control.send(pickle.dumps(("ready",)))
    while True:
        readable = select.select([control, wake_r], [], [])[0]
        if wake_r in readable:
            os.read(wake_r, 4096)
        _reap(children)
        if control not in readable:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(control, 1 << 20, 16)
        except OSError:
            break
        if not message:
            break
        _, argv, cwd, env, targets = pickle.loads(message)
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _child(argv, cwd, env, fds, targets)  # never returns
        for fd_ in fds[:3] + fds[4:]:
            os.close(fd_)
        children[pid] = socket.socket(fileno=fds[3])
        control.send(pickle.dumps(("forked", pid)))
    for status in children.values():  # the runner's side is gone: so is the wait for these
        status.close()


def _reap(children: dict[int, socket.socket]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        sock = children.pop(pid, None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.send(_CODE.pack(os.waitstatus_to_exitcode(status)))
            sock.close()


def _child(argv: list[str], cwd: str, env: dict[str, str], fds: list[int], targets: list[int]) -> None:
    """In the forked child: the request's streams, descriptors, folder and environment; then pytest, as ``python -m
    pytest ARGV`` would run it; then the exit, with this process's atexit work (its zygotes ended)."""
    import atexit
    import io
    import random

    code = 1
    try:
        os.setsid()
        stdin, stdout, stderr, status, *passed = fds
        os.close(status)
        for target, fd in zip((0, 1, 2), (stdin, stdout, stderr)):
            os.dup2(fd, target)
        # the passed descriptors under the numbers the runner's arguments name, nothing else of the template's open
        # (its control socket, the other children's status sockets): each moved out of the way first
        import fcntl
        import resource

        base = min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], _HIGH) - len(passed) - 1
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, base) for fd in passed]
        os.closerange(3, base)
        for fd, target in zip(high, targets):
            os.dup2(fd, target, inheritable=False)
            os.close(fd)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", line_buffering=True)
        sys.argv = ["pytest", *argv]
        random.seed()  # as a process of its own would have: nothing drawn in the template is shared
        import numpy as np

        np.random.seed()
        import pytest

        code = int(pytest.main(argv))
    except BaseException:  # noqa: BLE001 - the child never returns into the template's loop
        code = 1
        with contextlib.suppress(Exception):
            import traceback

            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
