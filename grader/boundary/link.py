"""One session's worker, one at a time: starting it confined, asking it, discarding it.

A worker is forked by the session's zygote where there is one, or started as a process of its own (``python -s
-B -c``, its working folder never on the import path, confined by its command line before it imports anything of
the submission's). Each worker gets a scratch folder of a new name (:mod:`staging`) and a hang file of its own
(:mod:`hang`).

What this class accepts from the worker: a "ready" frame with its confinement level (a string, shown as the
worker's own report), and answers that repeat the fresh number of the request they answer (an answer written
before its request, by a student's thread, is no answer). Anything else, a worker that ends, or a frame that does
not decode, discards the worker: the next request starts a new one.
"""
from __future__ import annotations

import os
import pickle
import secrets
import shutil
import tempfile
from pathlib import Path

from grader.base.homeworks import ROOT, Homework
from grader.boundary import confine, replies, wire, zygote
from grader.boundary.channel import Channel, Forked, Spawned
from grader.boundary.errors import WorkerCrashed
from grader.boundary.hang import HangReport
from grader.boundary.meter import GRACE, Meter
from grader.boundary.staging import stage

START_LIMIT = 30.0  # s for a worker to start (Python, NumPy, the file system view)
# the working folder (the submission's scratch folder for a worker of its own) never on the import path: its
# numpy.py would run before the worker confines itself
_BOOT = ("import sys; sys.path[:] = [{root!r}] + [p for p in sys.path if p not in ('', '.')]; "
         "from grader.boundary.worker import main; main()")


class Link:
    """``hidden``: the link of the session's hidden checks (grader.grading.hidden), whose workers serve no public check:
    forked by a zygote of their own (their own scratch folders, /tmp and PID namespace), without namespaces run as the
    lease's hidden twin (confine.hidden_uid), under umask 077 and unable to widen it (worker._serve)."""

    def __init__(self, hw: Homework, source: Path, token: str, provided: dict[str, Path], kit_modules: list[str],
                 hidden: bool = False):
        self.hw, self.source, self.token, self.provided = hw, source, token, provided
        self.kit_modules, self.hidden = kit_modules, hidden
        self.confined = confine.namespaces_available()
        self.level = confine.NAMESPACES if self.confined else confine.LIMITS_ONLY
        self.uid = self._user()  # the submission's own user, where a root grader can give it one
        self.zygote = zygote.for_session(hw, self.confined, hidden)  # workers forked by it, where it can (its
        # folder holds this session's, so that the zygote's file system view has it)
        self.tmp = Path(tempfile.mkdtemp(prefix="session-" if self.zygote else "hwgrade-",
                                         dir=str(self.zygote.base) if self.zygote else None))
        self.worker: Channel | None = None
        self.ready = False
        self.loaded: dict = {}  # what the running worker has loaded: module name -> session._Loaded
        self.meter = Meter()  # what each request costs
        self.hang = HangReport(self.tmp)
        self.sources: dict[str, list[str]] = {}  # the submission's modules as staged: file name -> lines
        self.scratch: Path | None = None  # the running worker's working folder

    def prepare(self) -> None:
        """Start the worker (or the zygote that forks it) now, without waiting: it boots while pytest collects."""
        if self.zygote is not None:
            self.zygote.start()
        elif self.worker is None:
            self._spawn()

    def start(self) -> None:
        """A worker that is ready for requests."""
        if self.worker is None:
            self._spawn()
        if self.ready:
            return
        try:
            ready = self.worker.receive(START_LIMIT)
        except (TimeoutError, wire.WireError):
            ready = None
        if not replies.shape(ready, "ready", 2):
            self.discard()
            if self.confined:  # namespaces that probe fine but fail in earnest: grade without them
                self.confined, self.level = False, confine.LIMITS_ONLY
                return self.start()
            raise RuntimeError("процесс для проверки вашего кода не запустился")
        self.level, self.ready = str(ready[1]), True

    def _user(self) -> int | None:
        """The user this link's workers run as (None: the grader's own; with namespaces, their root outside them)."""
        uid = confine.worker_uid()
        return confine.hidden_uid(uid) if self.hidden else uid

    def _spawn(self) -> None:
        scratch = self._fresh_scratch()
        hello = {"source": str(scratch / self.source.name) if self.source.suffix == ".ipynb" else str(scratch),
                 "scratch": str(scratch), "provided": sorted(self.provided), "hang_fd": self.hang.fresh(),
                 "kit_modules": self.kit_modules, "import_path": [str(ROOT), str(self.hw.shared_dir)],
                 "confined": self.confined, "root_dir": str(self.tmp / "root"), "visible": zygote.visible(self.hw),
                 "uid": self.uid, "hidden": self.hidden}
        (self.tmp / "root").mkdir(exist_ok=True)
        os.chmod(self.tmp / "root", 0o755)  # the namespaces' root, another user outside them, mounts its view on it
        self.ready = False
        self.meter.reset()
        if self.zygote is not None and (self.zygote.confined, self.zygote.uid) == (self.confined, self.uid):
            try:
                self.worker = Forked(self.zygote, hello)
                return
            except zygote.ZygoteGone:
                self.zygote = None  # started as a process of its own from now on
        # -s: no user site; -B: no bytecode written; the environment is the clean one of confine.environment
        cmd = confine.command(["-s", "-B", "-c", _BOOT.format(root=str(ROOT))], self.confined)
        user = confine.as_user(self.uid) if self.confined and self.uid is not None else {}
        self.worker = Spawned(cmd, confine.environment(self.token), str(scratch), pickle.dumps(hello),
                              (hello["hang_fd"],), user)

    def _fresh_scratch(self) -> Path:
        if self.scratch is not None:  # the last worker's (gone now): never reused, so never a link it left there
            shutil.rmtree(self.scratch, ignore_errors=True)
        os.chmod(self.tmp, 0o711)  # a worker run as a user of its own reaches its scratch folder and nothing else here
        self.scratch = Path(tempfile.mkdtemp(prefix="work-", dir=str(self.tmp)))  # a new name each time
        self.sources = stage(self.source, self.scratch, self.provided, self.uid)
        return self.scratch

    def ask(self, request: tuple, seconds: float, cpu_seconds: float | None = None,
            sleep_seconds: float | None = None):
        """Send a request and wait for its answer: TimeoutError past ``seconds`` of wall-clock time and the grace,
        past ``cpu_seconds`` of the worker's CPU time as the kernel counts it (where the zygote can say; the worker's
        own watchdog ends it there first, unless its clocks were forged), or past ``sleep_seconds`` of waiting that
        is neither on a CPU nor queued for one. ``self.meter`` then says what the request cost."""
        number = secrets.randbits(63)
        try:
            payload = pickle.dumps((number, request), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:  # the check's own mistake
            raise RuntimeError(f"проверка не смогла передать аргументы в процесс с вашим кодом: {exc}") from None
        worker = self.worker
        if worker is None or not worker.send(payload):
            code = worker.exit_code() if worker else None
            self.discard()
            raise WorkerCrashed(f"код {code}")
        try:
            answer = self.meter.receive(worker, seconds + GRACE, cpu_seconds, sleep_seconds)
        except TimeoutError:
            raise
        except wire.WireError as exc:
            self.discard()
            raise WorkerCrashed(f"ответ не читается: {exc}") from None
        if answer is None:
            code = worker.exit_code()
            if code == 1 and self.hang.written():  # its watchdog fired
                raise TimeoutError
            self.discard()
            raise WorkerCrashed(f"код {code}")
        if type(answer) is not tuple or not answer or answer[0] != number:
            self.discard()
            raise WorkerCrashed("ответ пришёл не на этот вызов")
        return answer[1:]

    @property
    def measures_cpu(self) -> bool:
        """Whether the running worker's CPU time is known here (a worker forked by the zygote)."""
        return isinstance(self.worker, Forked)

    def where(self, function: str | None) -> str:
        """Where the student's code was when the worker's watchdog fired."""
        return self.hang.where(function, self.scratch, self.sources)

    def entered(self) -> list[str]:
        """The student's functions the call that ran past its limit went through (the hang report's last line)."""
        return self.hang.entered()

    def discard(self) -> None:
        if self.worker is not None:
            self.worker.kill()
            self.worker = None
        self.loaded.clear()
        confine.reap(self.token)

    def close(self) -> None:
        if self.worker is not None:
            self.worker.send(pickle.dumps((0, ("bye",))))  # the worker ends its loop
            if self.worker.exit_code() is None:
                self.worker.kill()
            self.worker = None
        confine.reap(self.token)
        self.hang.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
