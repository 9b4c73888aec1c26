"""The grading side of the zygote: the confined process that forks the workers (grader.boundary.worker.zygote).

Python's and NumPy's start-up and the confinement are paid once per checking process, not once per worker.
The grader's command line starts the zygote of each checking process next to it, so that both boot at once
(``--zygote FD:FOLDER`` hands it over); a checking process started otherwise starts its own when it needs one.
The zygote's folder holds every session's folder (scratch, hang file), visible and writable in its file system
view. Elsewhere than on Linux there is no zygote, and each worker is a process of its own.

This module imports no NumPy: the command line uses it before its checking process starts.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from grader.base.homeworks import ROOT, Homework
from grader.boundary import confine, forkserver, template

START_LIMIT = 30.0  # s for the zygote to start, or to answer a request
# the working folder (the submission's scratch folder for a worker of its own) never on the import path: its
# numpy.py would run before the worker confines itself
_BOOT = ("import sys; sys.path[:] = [{root!r}] + [p for p in sys.path if p not in ('', '.')]; "
         "from grader.boundary.worker import zygote; zygote()")


class ZygoteGone(Exception):
    """The zygote did not start or no longer answers: workers are started as processes of their own."""


def available() -> bool:
    """Linux only: on macOS a process that has loaded NumPy (Accelerate, libdispatch) must not fork without exec,
    and Windows has no fork. ``HWKIT_ZYGOTE=off``: none here either (the kit's tests try that way too)."""
    if os.environ.get("HWKIT_ZYGOTE", "").lower() in ("off", "0", "no"):
        return False
    return sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(socket, "send_fds")


class Zygote:
    """One zygote: its process (when this process started it), its control socket, its folder."""

    def __init__(self, hw: Homework, confined: bool, token: str, base: Path | None = None, uid: int | None = None):
        self.hw, self.confined, self.token = hw, confined, token
        self.uid = uid  # the workers' user, without namespaces
        self.owned = base is None  # a folder made here is removed here
        self.base = Path(base) if base is not None else Path(tempfile.mkdtemp(prefix="hwgrade-"))
        os.chmod(self.base, 0o711)
        self.proc: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.ready: bool | None = None  # None: not started or not yet heard from; False: gone

    def start(self, *, detached: bool = False) -> None:
        """Start the zygote (once). ``detached``: for another process, which gets the control socket (the command
        line starting a checking process's zygote); its ready message is then not waited for here."""
        if self.proc is not None or self.ready is not None:
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        (self.base / "root").mkdir(exist_ok=True)
        os.chmod(self.base / "root", 0o755)  # the namespaces' root, another user outside them, mounts its view on it
        config = {"scratch": str(self.base), "root_dir": str(self.base / "root"), "confined": self.confined,
                  "visible": visible(self.hw), "control_fd": theirs.fileno(), "uid": self.uid}
        try:
            self.proc = self._fork(theirs.fileno(), detached) or self._exec(theirs.fileno(), detached)
            self.proc.stdin.write(_frame(pickle.dumps(config)))
            self.proc.stdin.close()
        except OSError:
            self.ready = False
            ours.close()
            return
        finally:
            theirs.close()
        self.control = ours

    def _fork(self, control: int, detached: bool):
        """The zygote forked by the batch's worker template (grader.boundary.template), or None where there is
        none (or it is gone)."""
        held = template.current()
        if held is None:
            return None
        request = (str(self.base), confine.environment(self.token), self.confined,
                   self.uid if self.confined else None)  # without namespaces it changes user itself (confine.enter)
        try:
            return held.fork(request, {control: control}, stdin=True, stdout=not detached)
        except forkserver.ServerGone:
            return None

    def _exec(self, control: int, detached: bool) -> subprocess.Popen:
        """The zygote started by exec (in the namespaces where they are to be had)."""
        cmd = confine.command(["-s", "-B", "-c", _BOOT.format(root=str(ROOT))], self.confined)
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL if detached else subprocess.PIPE,
                                stderr=subprocess.DEVNULL, cwd=str(self.base), env=confine.environment(self.token),
                                start_new_session=True, pass_fds=(control,), **self._user())

    def _user(self) -> dict:
        """With namespaces, the zygote is started as its workers' user, who becomes their root (without them it
        starts as this process's and changes user itself, grader.boundary.confine.enter)."""
        return confine.as_user(self.uid) if self.confined and self.uid is not None else {}

    def _await(self) -> None:
        """Wait for the zygote's ready message (or its failure to start)."""
        if self.ready is None:
            from grader.boundary import wire

            answer = None
            fd = self.proc.stdout.fileno() if self.proc is not None and self.proc.stdout else None
            if fd is not None and select.select([fd], [], [], START_LIMIT)[0]:
                try:
                    frame = wire.read_frame(self.proc.stdout)
                    answer = wire.decode(frame) if frame is not None else None
                except (wire.WireError, OSError, ValueError):
                    answer = None
            self.ready = type(answer) is tuple and len(answer) == 2 and answer[0] == "ready"
        if not self.ready:
            self.stop()
            raise ZygoteGone

    def _request(self, request: tuple, fds: list[int] = ()):
        from grader.boundary import wire

        self.start()
        self._await()
        try:
            socket.send_fds(self.control, [pickle.dumps(request)], list(fds))
            self.control.settimeout(START_LIMIT)
            return wire.decode(self.control.recv(1 << 16))
        except (OSError, wire.WireError):
            self.ready = False
            self.stop()
            raise ZygoteGone from None

    def fork(self, config: dict, fds: list[int]) -> int:
        """Fork a worker with ``config`` and the descriptors of its request pipe, answer pipe and hang file."""
        answer = self._request(("fork", config), fds)
        if not (type(answer) is tuple and len(answer) == 2 and answer[0] == "forked" and type(answer[1]) is int):
            raise ZygoteGone
        return answer[1]

    def kill(self, pid: int) -> None:
        try:
            self._request(("kill", pid))
        except ZygoteGone:
            pass

    def wait(self, pid: int, seconds: float) -> int | None:
        try:
            answer = self._request(("wait", pid, seconds))
        except ZygoteGone:
            return None
        ok = type(answer) is tuple and len(answer) == 2 and answer[0] == "status"
        return answer[1] if ok and type(answer[1]) in (int, type(None)) else None

    def cpu(self, pid: int) -> tuple[float, float] | None:
        """(the CPU time worker ``pid`` has used, its every thread; the time its main thread waited for a CPU), as
        the kernel counts them."""
        try:
            answer = self._request(("cpu", pid))
        except ZygoteGone:
            return None
        ok = type(answer) is tuple and len(answer) == 3 and answer[0] == "cpu" \
            and all(type(x) is float and x >= 0 for x in answer[1:])
        return (answer[1], answer[2]) if ok else None

    def stop(self) -> None:
        """The zygote ends when every holder of its control socket has closed it, and its PID namespace with every
        worker in it; a process this one started is waited for."""
        if self.control is not None:
            self.control.close()
            self.control = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
            if self.proc.stdout:
                self.proc.stdout.close()
            self.proc = None
            confine.reap(self.token)

    def remove(self) -> None:
        self.stop()
        if self.owned:
            shutil.rmtree(self.base, ignore_errors=True)


def _frame(payload: bytes) -> bytes:
    """A frame of grader.boundary.wire (its length first), without importing it (it imports NumPy)."""
    return struct.Struct("<Q").pack(len(payload)) + payload


# ---- the zygotes of this process -------------------------------------------------------------------------

_ZYGOTES: dict[tuple, Zygote] = {}


def _key(hw: Homework, confined: bool, hidden: bool = False) -> tuple:
    return hw.name, str(hw.tests_dir), confined, hidden


def for_session(hw: Homework, confined: bool, hidden: bool = False) -> Zygote | None:
    """The zygote of this process for ``hw`` (None where workers cannot be forked). ``hidden``: the one of the
    workers of hidden checks (grader.grading.hidden), never the public workers' own: its folder (their scratch folders),
    its private /tmp and its PID namespace are its own, and without namespaces its user is the lease's hidden twin
    (confine.hidden_uid)."""
    if not available():
        return None
    key = _key(hw, confined, hidden)
    if key not in _ZYGOTES or _ZYGOTES[key].ready is False:
        run = os.environ.get("HWKIT_RUN_TOKEN") or uuid.uuid4().hex
        uid = confine.worker_uid()
        _ZYGOTES[key] = Zygote(hw, confined, f"{run}.{uuid.uuid4().hex[:12]}",
                               uid=confine.hidden_uid(uid) if hidden else uid)
    return _ZYGOTES[key]


def adopt(hw: Homework, confined: bool, spec: str) -> None:
    """Take over the zygote the command line started for this process: ``spec`` is ``FD:FOLDER`` (``--zygote``),
    FD its control socket here. A zygote that did not start shows at the first fork (then workers are spawned)."""
    fd, _, folder = spec.partition(":")
    if not available() or not fd.isdigit() or not Path(folder).is_dir():
        return
    zygote = Zygote(hw, confined, "", base=Path(folder), uid=confine.worker_uid())  # the command line's lease
    zygote.control, zygote.ready = socket.socket(fileno=int(fd)), True
    _ZYGOTES[_key(hw, confined)] = zygote


def for_checking_process(hw: Homework, confined: bool, token: str, uid: int | None = None) -> Zygote | None:
    """A zygote started now for a checking process about to start (the command line), its workers run as ``uid``
    (with namespaces, their root is that user outside them); None where not available."""
    if not available():
        return None
    zygote = Zygote(hw, confined, f"{token}.{uuid.uuid4().hex[:12]}", uid=uid)
    zygote.start(detached=True)
    if zygote.control is None:
        zygote.remove()
        return None
    return zygote


_KEPT = [0]  # > 0: a process that runs several pytest sessions keeps its zygotes between them (kept())


@contextlib.contextmanager
def kept():
    """Keep this process's zygotes across pytest sessions run in it one after another (the kit's catalogue
    grades many implementations of a part so, tests/kit/catalogue_run.py); they end when the block ends."""
    _KEPT[0] += 1
    try:
        yield
    finally:
        _KEPT[0] -= 1
        shutdown()


def shutdown() -> None:
    """End every zygote of this process (the checking process's last step), unless they are kept()."""
    if _KEPT[0]:
        return
    for zygote in _ZYGOTES.values():
        zygote.remove()
    _ZYGOTES.clear()


atexit.register(shutdown)


def visible(hw: Homework) -> list[str]:
    """What a worker may read: the Python installation and its packages, the kit's grader, the modules the
    homework's checks share with it (``tests/<hw>/shared``: the test environments' classes) and its list of parts
    (``parts.toml``: a notebook's setup cell knows the repository by it); never the checks themselves, the kit's
    root as a whole, nor any other folder that happens to be on this process's import path (the current folder,
    /tmp)."""
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    paths = prefixes | {os.path.dirname(os.path.realpath(sys.executable)), str(ROOT / "grader")}
    paths |= {str(p) for p in (hw.shared_dir, hw.tests_dir / "parts.toml") if p.exists()}
    for entry in sys.path:
        if not entry or not os.path.isabs(entry) or not os.path.exists(entry):
            continue
        real = os.path.realpath(entry)
        packages = Path(real).name in ("site-packages", "dist-packages") or real.endswith(".zip")
        if packages or any(real.startswith(p + os.sep) for p in prefixes):
            paths.add(real)
    return sorted(paths)
