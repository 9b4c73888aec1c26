"""The checking template: one process per batch that pays Python's, pytest's and NumPy's start-up once and forks the
checking processes (a warm start).

Cold, each checking process is ``python -m pytest <test files> ...`` (grader/grading/runner.py): Python, NumPy, pytest
and the grader are imported again for every submission. Warm, a batch (and one grade from the command line, whose two
checking processes it forks: grader.cli) starts one template (``python -c``, by exec) that imports them, the grader's
plugin and pytest's own plugins, and nothing of any test file or of the answer key; for each checking process the runner
would start, the template forks a child that takes the request's command line, working folder, standard streams and
environment (the whole of it: ``HWKIT_INPUTS``, ``HWKIT_SECRET_FILE``, ``HWKIT_CONFINE``, the worker's uid and the run's
token come per request, never from whoever started the template) and runs ``pytest.main`` in it: collection, the test
modules and the answer key are the child's own, as in a cold process. Like a checking process, the template may hold the
key: it is part of the checking side. No worker is ever forked from it: workers come from the zygotes, which are started
by exec (grader/boundary/zygote.py), so the boundary is the cold path's.

Forking and reaping are grader/boundary/forkserver.py's. Linux only (:func:`available`); anywhere else, or with
``HWKIT_WARM=off``, or when the template is gone, a checking process is started cold.
"""
from __future__ import annotations

import contextlib
import os
import socket
import sys

from grader.base.homeworks import ROOT
from grader.boundary import forkserver

WARM_ENV = "HWKIT_WARM"  # "off": every checking process started cold (the kit's tests compare both paths)
_BOOT = ("import sys; sys.path[:] = [{root!r}] + [p for p in sys.path if p not in ('', '.')]; "
         "from grader.grading.warm import serve; serve({{fd}})")
TemplateGone = forkserver.ServerGone


def available(env: dict[str, str] | None = None) -> bool:
    """Linux only (grader.boundary.forkserver); ``HWKIT_WARM=off`` in ``env`` (this process's by default): nowhere."""
    env = os.environ if env is None else env
    return env.get(WARM_ENV, "").lower() not in ("off", "0", "no") and forkserver.available()


class Template(forkserver.Server):
    """The checking template; :meth:`run` forks a checking process."""

    def __init__(self, env: dict[str, str]):
        super().__init__(_BOOT.format(root=str(ROOT)), env)

    def run(self, cmd: list[str], cwd: str, env: dict[str, str], stderr,
            pass_fds: tuple[int, ...] = ()) -> forkserver.Process:
        """Fork a checking process running ``cmd`` (``python -m pytest ARGS``) in ``cwd`` with exactly ``env``, its
        stdin and stdout pipes to this process, its stderr the file ``stderr``, and ``pass_fds`` under their numbers
        here; :class:`TemplateGone` when the template cannot."""
        if cmd[:3] != [sys.executable, "-m", "pytest"]:
            raise ValueError(f"not a checking process: {cmd[:3]}")
        return self.client.fork((cmd[3:], cwd, env), {2: stderr.fileno(), **{fd: fd for fd in pass_fds}},
                                stdin=True, stdout=True)


class Adopted:
    """A connection to a checking template that another process holds and passed this one (its descriptor): the kit's
    own suite holds the two templates for all its runs of the command line (tests/kit/warm_cli.py)."""

    def __init__(self, fd: int):
        self.client = forkserver.Client(socket.socket(fileno=fd), ready=True)

    run = Template.run


_CURRENT: list[Template | Adopted] = []


def adopt(fd: int) -> None:
    """Take the connection to a checking template that the process which started this one holds (:class:`Adopted`):
    this process's runs fork their checking processes from it (grader.grading.runner.checking_template)."""
    _CURRENT.append(Adopted(fd))


def current() -> Template | Adopted | None:
    """The template of the batch running in this process, if any."""
    return _CURRENT[-1] if _CURRENT else None


@contextlib.contextmanager
def template(env: dict[str, str]):
    """A checking template for the block (None where :func:`available` says no), started with ``env``; the runner's
    checking processes are forked by it meanwhile (grader.grading.runner._start)."""
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
    secret when they are imported (grader.grading.hidden), so each child collects them itself."""
    import importlib

    import numpy  # noqa: F401
    import pytest  # noqa: F401
    from _pytest.config import default_plugins

    for name in default_plugins:
        with contextlib.suppress(ImportError):
            importlib.import_module(f"_pytest.{name}")
    import grader.grading.checks  # noqa: F401
    import grader.grading.plugin  # noqa: F401


def serve(fd: int) -> None:
    """The template: import what it holds, then fork a checking process for each request (boundary.forkserver)."""
    from grader.boundary import confine

    sys.argv = ["pytest (the checking template)"]
    confine.not_dumpable()  # like every process of the checking side: no other process of its user reads it
    _preload()
    forkserver.serve(fd, _child)


def _child(request: tuple) -> None:
    """In the forked child (its descriptors in place): the request's folder and environment; then pytest, as
    ``python -m pytest ARGV`` would run it; then the exit, with this process's atexit work (its zygotes ended)."""
    import atexit

    argv, cwd, env = request
    code = 1
    try:
        forkserver.become(cwd, env, ["pytest", *argv])
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
