"""A fork server: a process started once by exec that forks a child for each request, and the client's side of it.

The grader's two templates are fork servers (a warm start: Python's and NumPy's imports paid once): the checking
template (grader/grading/warm.py), which forks the checking processes, and the worker template
(grader/boundary/template.py),
which forks the zygotes. This module holds what they share and nothing else: the protocol, the child's descriptors
and start (:func:`become`), the reaping. It imports the standard library only.

The protocol: a Unix SEQPACKET socket per client, pickles both ways (both ends are the grader's own). The server says
``("ready",)`` once it has imported what it holds. A request ``("fork", payload, targets)`` comes with descriptors:
the child's status socket first, then those the child gets under the numbers ``targets`` (0, 1, 2: its standard
streams); the answer is ``("forked", pid)``. ``("connect",)`` comes with one descriptor, a socket that becomes another
client of the server (a process the first client starts gets a connection of its own). The server reaps its children
and writes each one's exit code to its status socket; it ends when its first client closes its socket.
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

START_LIMIT = 60.0  # s for a server to import what it holds, or to answer
_CODE = struct.Struct("<i")
_HIGH = 1 << 12  # where a child moves its descriptors while it closes the rest


class ServerGone(Exception):
    """The server did not start or no longer answers: the caller starts its process by exec instead."""


def available() -> bool:
    """Linux only: a process that has loaded NumPy must not fork without exec on macOS, and Windows has no fork."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(socket, "send_fds")


class Process:
    """A child of the server, as much of ``subprocess.Popen`` as the grader uses: ``pid`` (the leader of a session of
    its own: its group is killed whole), ``stdin``, ``stdout``, ``kill()``, ``poll()``, ``wait()``. Its exit code comes
    from the server, which reaps it (so its pid is not reused while this side may still kill its group)."""

    def __init__(self, pid: int, status: socket.socket, stdin=None, stdout=None):
        self.pid, self.status, self.stdin, self.stdout = pid, status, stdin, stdout
        self.returncode: int | None = None
        self.args = [f"forked {pid}"]

    def poll(self) -> int | None:
        try:
            return self.wait(0.0)
        except subprocess.TimeoutExpired:
            return None

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is not None:
            return self.returncode
        if not select.select([self.status], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(self.args, timeout)
        data = self.status.recv(_CODE.size)
        if len(data) == _CODE.size:
            self.returncode = _CODE.unpack(data)[0]
        else:  # the server is gone: the child is no longer its to reap, and is ended now
            self.kill()
            self.returncode = -signal.SIGKILL
        self.status.close()
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)


class Client:
    """One connection to a server: requests and their answers one at a time (the grader's threads ask at once)."""

    def __init__(self, sock: socket.socket, ready: bool | None = None):
        self.sock, self.ready = sock, ready  # ready None: the server's first word not read yet
        self.lock = threading.Lock()

    def _answer(self):
        self.sock.settimeout(START_LIMIT)
        try:
            data = self.sock.recv(1 << 16)
            return pickle.loads(data) if data else None
        except (OSError, pickle.UnpicklingError, EOFError):
            return None

    def _ask(self, request: tuple, fds: list[int]):
        if self.sock is None:
            raise ServerGone
        if self.ready is None:
            self.ready = self._answer() == ("ready",)
        if not self.ready:
            self.close()
            raise ServerGone
        try:
            socket.send_fds(self.sock, [pickle.dumps(request)], fds)
        except OSError:
            self.close()
            raise ServerGone from None
        answer = self._answer()
        if answer is None:
            self.close()
            raise ServerGone
        return answer

    def fork(self, payload, fds: dict[int, int], stdin: bool = False, stdout: bool = False) -> Process:
        """A child of the server given ``payload`` and the descriptors ``fds`` (its number -> ours; a standard stream
        missing from them is /dev/null). ``stdin``, ``stdout``: that stream is a new pipe to this process
        (``Process.stdin``, ``Process.stdout``)."""
        with self.lock:
            made, ours = [], {}
            for wanted, number, name in ((stdin, 0, "stdin"), (stdout, 1, "stdout")):
                if wanted:
                    r, w = os.pipe()
                    theirs_end, ours[name] = (r, w) if number == 0 else (w, r)
                    fds = {**fds, number: theirs_end}
                    made.append(theirs_end)
            status, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            targets = list(fds)
            try:
                answer = self._ask(("fork", payload, targets), [theirs.fileno(), *fds.values()])
            except ServerGone:
                answer = None
            finally:
                theirs.close()
                for fd in made:
                    os.close(fd)
            if not (type(answer) is tuple and len(answer) == 2 and answer[0] == "forked" and type(answer[1]) is int):
                for fd in ours.values():
                    os.close(fd)
                status.close()
                self.close()
                raise ServerGone
        return Process(answer[1], status, os.fdopen(ours["stdin"], "wb") if "stdin" in ours else None,
                       os.fdopen(ours["stdout"], "rb") if "stdout" in ours else None)

    def connect(self) -> socket.socket:
        """A new connection to the server, for another process (its end is returned, to be passed on)."""
        with self.lock:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                answer = self._ask(("connect",), [ours.fileno()])
            finally:
                ours.close()
            if answer != ("connected",):
                theirs.close()
                raise ServerGone
            return theirs

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.ready = False


class Server:
    """A server started here by exec: ``boot`` is the Python code it runs, with ``{fd}`` its socket's number, and
    ``flags`` Python's options."""

    def __init__(self, boot: str, env: dict[str, str], flags: tuple[str, ...] = ()):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc: subprocess.Popen | None = None
        try:
            self.proc = subprocess.Popen([sys.executable, *flags, "-c", boot.format(fd=theirs.fileno())],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, cwd="/", env=env, start_new_session=True,
                                         pass_fds=(theirs.fileno(),))
            self.client = Client(ours)
        except OSError:
            ours.close()
            self.client = Client(None, ready=False)
        finally:
            theirs.close()

    def stop(self) -> None:
        """End the server: it ends when its first client's socket closes (its children are not its to end)."""
        self.client.close()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            self.proc = None


# ---- the server's side ---------------------------------------------------------------------------------------

def serve(fd: int, child) -> None:
    """Fork a child for each request of any client until the first one closes its socket; ``child(payload)`` runs in
    it with its descriptors in place (:func:`place`) and never returns."""
    first = socket.socket(fileno=fd)
    clients = [first]
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}  # pid -> its status socket
    first.send(pickle.dumps(("ready",)))
    while True:
        try:
            readable = select.select([*clients, wake_r], [], [])[0]
        except InterruptedError:
            continue
        if wake_r in readable:
            os.read(wake_r, 4096)
        _reap(children)
        for sock in [s for s in clients if s in readable]:
            try:
                message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 64)
            except OSError:
                message, fds = b"", []
            if not message:
                if sock is first:
                    return
                clients.remove(sock)
                sock.close()
                continue
            request = pickle.loads(message)
            if request[0] == "connect":
                clients.append(socket.socket(fileno=fds[0]))
                sock.send(pickle.dumps(("connected",)))
                continue
            _, payload, targets = request
            pid = _fork(child, payload, targets, fds[1:])
            for n in fds[1:]:
                os.close(n)
            children[pid] = socket.socket(fileno=fds[0])
            sock.send(pickle.dumps(("forked", pid)))


def _fork(child, payload, targets: list[int], fds: list[int]) -> int:
    """Fork the child of a request; in it: the server's signal handling undone, a session of its own, each of
    ``fds`` under its number of ``targets`` (:func:`place`), then ``child(payload)``, which never returns. Here: the
    child's pid."""
    pid = os.fork()
    if pid == 0:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        code = 70
        try:
            os.setsid()
            place(dict(zip(targets, fds)))
            child(payload)
        finally:
            os._exit(code)
    return pid


def become(cwd: str, env: dict[str, str], argv: list[str]) -> None:
    """In a child: the request's working folder, whole environment, command line and standard streams (descriptors
    0–2, as :func:`place` put them), and random state of its own, as a process started by exec would have: nothing
    drawn in the server is shared (Python's generator, and NumPy's global one where the server imported NumPy)."""
    import io
    import random

    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", line_buffering=True)
    sys.argv = argv
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()


def _reap(children: dict[int, socket.socket]) -> None:
    while True:
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


def place(fds: dict[int, int]) -> None:
    """In a child: each descriptor of ``fds`` (its number -> where it is now) under its number, standard streams
    missing from it on /dev/null, and nothing else of the server's open (its clients' sockets, its other children's
    status sockets): each moved out of the way first."""
    import fcntl
    import resource

    null = os.open(os.devnull, os.O_RDWR)
    fds = {**{n: null for n in (0, 1, 2) if n not in fds}, **fds}
    base = min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], _HIGH) - len(fds) - 1
    if max(fds) >= base:
        raise OSError("a descriptor's number is too high to be placed")
    high = {target: fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, base) for target, fd in fds.items()}
    os.closerange(3, base)
    for target, fd in high.items():
        os.dup2(fd, target, inheritable=target < 3)
        os.close(fd)
