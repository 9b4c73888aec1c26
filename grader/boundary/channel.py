"""The pipes to one worker, and the two ways a worker is started.

What this module accepts from the worker: length-prefixed frames of at most :data:`wire.MAX_FRAME` bytes, read
with a deadline and decoded by :func:`wire.decode` into plain data (no pickle); a frame that is too long or
ends early is a :class:`wire.WireError`. Requests go the other way as pickles (the checking process's own data).
A worker is either forked by the zygote (:class:`Forked`; its pipes are handed over with the request) or a
process of its own (:class:`Spawned`, confined by its command line); either is killed as a process group. The
CPU time a forked worker used comes from the zygote, which reads it from the kernel: never the worker's word.
"""
from __future__ import annotations

import os
import queue
import select
import subprocess
import threading
import time

from grader.boundary import wire, zygote


class Channel:
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

    def cpu(self) -> tuple[float, float] | None:
        """(the worker's CPU time, the time it waited for a CPU) as the kernel counts them, where this side can know
        them (None: it cannot)."""
        return None

    def close(self) -> None:
        for stream in (self.writer, self.reader):
            try:
                stream.close()
            except OSError:
                pass


class Spawned(Channel):
    """A worker started as a process of its own (``python -c``, confined by its command line)."""

    def __init__(self, cmd: list[str], env: dict, cwd: str, hello: bytes, fds: tuple[int, ...] = (),
                 user: dict | None = None):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=cwd, env=env, start_new_session=True, pass_fds=fds, **(user or {}))
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


class Forked(Channel):
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

    def cpu(self) -> tuple[float, float] | None:
        return self.zygote.cpu(self.pid)
