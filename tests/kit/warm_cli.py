"""The suite's warm command line: one process per run of the kit's suite that imports the grader's command line once
(Python, NumPy and the grader: a few tenths of a second of CPU) and forks ``homework/check.py ARGS`` for each run of
it that the kit's tests ask for (kit.run_check), instead of starting Python again each time.

A forked run takes everything a run started by exec would take from its caller: the arguments, the working folder,
the whole environment (``HWKIT_CONFINE``, ``HWKIT_SECRET_FILE``, ``HWKIT_INPUTS`` and the rest come per run, never
from whoever started this process), its own run token (grader.grading.runner.RUN_TOKEN, drawn when the runner is
imported), its own random state, and standard streams of its own; it is the leader of a session of its own, and it runs
``grader.cli.main`` as ``homework/check.py`` does. What Python reads only when it starts (``PYTHON*``: the path, the
hash seed, ``sitecustomize``) a fork cannot take: a run whose environment differs there from this process's is started
by exec (:func:`can_fork`), as is every run where forking is not to be had (grader.boundary.forkserver.available).

The checking processes and zygotes a forked run starts are forked by the grader's own two templates
(grader.grading.warm,
grader.boundary.template), which this module starts once for the suite, as a command line starts them for its grade,
and hands each run a connection to (grader.grading.warm.adopt): the grader's boundary, not this module's. The paths
started by exec keep their tests: the command line from a shell (test_base_install, the attacks on the answer key,
Ctrl-C) is run by exec, and so is a run with ``KIT_WARM_CLI=off`` in its environment (tests/kit/test_warm.py compares
one grade started three ways; the suite run with it set starts every command line by exec); with ``HWKIT_WARM=off`` a
run gets no template and the grader starts its processes cold.
"""
from __future__ import annotations

import atexit
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK_PY = ROOT / "homework" / "check.py"
sys.path.insert(0, str(ROOT))

from grader.boundary import forkserver  # noqa: E402

OFF_ENV = "KIT_WARM_CLI"  # "off": every run of the command line started by exec
_BOOT = ("import sys; sys.path[:] = [{kit!r}, {root!r}] + [p for p in sys.path if p not in ('', '.')]; "
         "from warm_cli import serve; serve({{fd}})")
_SERVER: list[forkserver.Server] = []
_STARTED_WITH: dict[str, str] = {}  # the warm process's PYTHON* variables
_STARTING = threading.Lock()  # the suite's first runs may come from two threads at once (test_attacks' gradings)


def _startup(env: dict[str, str]) -> dict[str, str]:
    """What of ``env`` Python reads only when it starts."""
    return {k: v for k, v in env.items() if k.startswith("PYTHON")}


def warm_grader(env: dict[str, str]) -> bool:
    """Whether the grader starts its templates itself in ``env`` (not with HWKIT_WARM=off)."""
    from grader.grading import warm

    return warm.available(env)


def _suite_env() -> dict[str, str]:
    return dict(os.environ, PYTHONDONTWRITEBYTECODE="1")


def can_fork(env: dict[str, str]) -> bool:
    """Whether the run in ``env`` is forked here: not with ``KIT_WARM_CLI=off`` in it (the suite's environment, or one
    test's run), nor where Python would start otherwise than the warm process did."""
    return (env.get(OFF_ENV, "").lower() not in ("off", "0", "no") and forkserver.available()
            and _startup(env) == (_STARTED_WITH if _SERVER else _startup(_suite_env())))


def _servers() -> list:
    """The command line's warm process and the grader's two templates, started once and stopped at exit (waited for,
    so that the CPU of every process they forked is counted in the suite's)."""
    with _STARTING:
        return _SERVER or _start()


def _start() -> list:
    from grader.boundary import template, zygote
    from grader.grading import runner, warm

    _STARTED_WITH.update(_startup(_suite_env()))
    _SERVER.append(forkserver.Server(_BOOT.format(kit=str(Path(__file__).resolve().parent), root=str(ROOT)),
                                     _suite_env()))
    # as runner.checking_template starts them for a grade, but held here, for every run of the suite: never this
    # process's own (the kit's tests that grade in this process start what a command line would)
    _SERVER.append(warm.Template(runner.template_environment()))
    if zygote.available():
        _SERVER.append(template.WorkerTemplate(runner.RUN_TOKEN))
    for server in _SERVER:
        atexit.register(server.stop)
    return _SERVER


def run(args: list[str], cwd: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    """``python homework/check.py ARGS`` as ``subprocess.run(..., capture_output=True, text=True)`` gives it: forked
    by the suite's warm process where :func:`can_fork`, else started by exec."""
    cmd = [sys.executable, str(CHECK_PY), *args]
    if can_fork(env):
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc, links = None, []
            try:
                cli, *templates = _servers()
                if warm_grader(env) and len(templates) == 2:  # the run's checking processes and zygotes forked by
                    links = [t.client.connect() for t in templates]  # the suite's templates
                fds = {1: out.fileno(), 2: err.fileno(), **{3 + i: s.fileno() for i, s in enumerate(links)}}
                proc = cli.client.fork((list(args), cwd, env, bool(links)), fds)
            except forkserver.ServerGone:
                pass
            finally:
                for link in links:
                    link.close()
            if proc is not None:
                try:
                    code = proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    raise subprocess.TimeoutExpired(cmd, timeout) from None
                texts = []
                for f in (out, err):
                    f.seek(0)
                    texts.append(f.read().decode("utf-8", "replace"))
                return subprocess.CompletedProcess(cmd, code, *texts)
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, encoding="utf-8", timeout=timeout, env=env)


# ---- the warm process's side ----------------------------------------------------------------------------------

def serve(fd: int) -> None:
    """Import the command line, then fork a run of it for each request (grader.boundary.forkserver)."""
    import grader.cli  # noqa: F401 - what every run imports: NumPy, the grader

    forkserver.serve(fd, _child)


def _child(request: tuple) -> None:
    """In the forked child (its descriptors in place): the request's folder, environment and arguments, a run token
    and random state of its own; then the command line, as ``homework/check.py`` runs it; then the exit."""
    import uuid

    args, cwd, env, adopt = request
    code = 1
    try:
        forkserver.become(cwd, env, [str(CHECK_PY), *args])
        from grader import cli
        from grader.boundary import template
        from grader.grading import runner, warm

        runner.RUN_TOKEN = os.environ.get("HWKIT_RUN_TOKEN") or uuid.uuid4().hex
        if adopt:  # the suite's templates, as a command line's own would be (grader.grading.runner.checking_template)
            warm.adopt(3)
            template.adopt(4)
        code = cli.main()
    except SystemExit as exc:  # argparse's usage errors and --help
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - as Python would: the traceback, exit 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
