"""The worker template: the one process zygotes are forked from in a batch (a warm start).

Cold, each zygote is started by exec (``unshare ... python -c "...zygote()"``: grader/boundary/zygote.py) and imports
NumPy and the worker's modules again: twice per submission (its public and its hidden checks' zygotes). Warm, a batch
starts this template by exec, with a worker's clean environment (grader.boundary.confine.environment): it imports
NumPy and grader.boundary.worker, and nothing else of the grader's (never pytest, a check, the answer key or the
secret), so no zygote forked from it, and no worker forked from a zygote, can hold the key in its memory. For each
zygote the template forks a child (grader/boundary/forkserver.py) that takes the request's folder, environment (its
run's marker too, rewritten where other processes read it: confine.remark) and descriptors, enters the namespaces as
``unshare`` would (confine.unshare_here; as the submission's uid where a root grader gives one), and runs the zygote,
which confines itself and forks the workers exactly as a zygote started by exec does. The template is not dumpable:
no process of its user (a worker run without any confinement) can trace it to reach a later submission's zygote.

The command line holds the template; a checking process it starts gets a connection of its own (``--worker-template
FD``, grader.grading.plugin), so that the zygote of its hidden checks is forked by the template too. Where there is
none, or it is gone, a zygote is started by exec.
"""
from __future__ import annotations

import contextlib
import os
import socket

from grader.boundary import confine, forkserver

_BOOT = ("import sys; sys.path[:] = [{root!r}] + [p for p in sys.path if p not in ('', '.')]; "
         "from grader.boundary.template import serve; serve({{fd}})")
ROOM = 512  # characters of room for a zygote's marker and its run's token


class WorkerTemplate(forkserver.Server):
    """The worker template, started here by exec."""

    def __init__(self, run_token: str):
        from grader.base.homeworks import ROOT

        env = {**confine.environment(run_token), confine.ROOM_ENV: "." * ROOM}
        super().__init__(_BOOT.format(root=str(ROOT)), env, ("-s", "-B"))


_CURRENT: list[forkserver.Client] = []  # this process's connection to the batch's worker template


def current() -> forkserver.Client | None:
    return _CURRENT[-1] if _CURRENT and _CURRENT[-1].sock is not None else None


@contextlib.contextmanager
def template(run_token: str):
    """A worker template for the block (None where fork servers are not available), its processes carrying the
    marker ``run_token``; zygotes started in this process meanwhile are forked by it."""
    if not forkserver.available():
        yield None
        return
    held = WorkerTemplate(run_token)
    _CURRENT.append(held.client)
    try:
        yield held
    finally:
        _CURRENT.remove(held.client)
        held.stop()


def adopt(fd: int) -> None:
    """Take the connection to the worker template the command line passed this checking process (its descriptor)."""
    _CURRENT.append(forkserver.Client(socket.socket(fileno=fd), ready=True))


# ---- the template's side ------------------------------------------------------------------------------------

def serve(fd: int) -> None:
    """The template: NumPy and the worker's modules imported, then a zygote forked for each request."""
    from grader.boundary import worker  # noqa: F401 - NumPy and what a worker imports, once for every zygote

    confine.not_dumpable()
    forkserver.serve(fd, _zygote)


def _zygote(request: tuple) -> None:
    """In the forked child (its descriptors in place): the request's folder, environment and namespaces; then the
    zygote, as one started by exec runs it."""
    import random

    import numpy as np

    from grader.boundary import worker

    cwd, env, confined, uid = request
    os.chdir(cwd)
    confine.remark(env)
    random.seed()  # as a process of its own would have: nothing drawn in the template is shared
    np.random.seed()
    if confined:
        confine.unshare_here(uid)
    worker.zygote()
