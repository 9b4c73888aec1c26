"""Shared helpers of the kit's own tests: running the grader's command line and reading its JSON."""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.base.homeworks import ROOT

HW = "s6-hw00-rl-foundations"
CHECK = [sys.executable, str(ROOT / "homework" / "check.py")]


# the confinements a grade for the record is given under: Linux namespaces, and without them (Docker, as on
# Gradescope; Ubuntu 24.04 runners) a user of the submission's own, which a root grader runs the worker as
MODES = ["namespaces", "user"]


def mode_env(mode: str) -> dict[str, str]:
    """The environment that grades in ``mode``; skips the test where this machine cannot (failing instead in CI, which
    runs as root where both are to be had: a skip there would hide a confinement that no longer works)."""
    import pytest

    from grader.boundary import confine

    if mode == "namespaces":
        if not confine.namespaces_available():
            pytest.skip("пространства имён Linux недоступны на этой машине")
        return {}
    env = {"HWKIT_CONFINE": "off"}
    if not confine.separate_user_available(namespaces=False):  # asked, never set in this process's environment
        # (the suite's background gradings start processes meanwhile)
        why = ("the grader is not root" if os.geteuid() != 0 else
               "a uid without an account cannot run this Python or read the kit (a folder on the way closed to others)")
        if os.environ.get("CI") and os.geteuid() == 0:
            pytest.fail(f"the separate user's confinement is not to be had: {why}")
        pytest.skip(f"no separate user here: {why}")
    return env


@contextlib.contextmanager
def in_process(mode: str):
    """A session made in this process (grader.boundary.session.Session) confined as in ``mode`` ("namespaces", "user",
    or "same": without namespaces, as the grader's own user), without touching this process's environment (the
    suite's background gradings start processes meanwhile, and would take it)."""
    from unittest import mock

    from grader.boundary import confine

    if mode != "same":
        mode_env(mode)  # skips where this machine cannot
    with contextlib.ExitStack() as stack:
        if mode != "namespaces":
            stack.enter_context(mock.patch.object(confine, "namespaces_available", lambda: False))
        if mode == "same":
            stack.enter_context(mock.patch.object(confine, "separate_user_available", lambda namespaces=None: False))
        yield


def check_env(env_extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the kit's tests run the grader's command line in."""
    return dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env_extra or {}))


def run_check(*args: str, cwd: Path = ROOT, timeout: float = 300,
              env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python homework/check.py ARGS``, forked by the suite's warm process (warm_cli) where it can be."""
    import warm_cli

    return warm_cli.run(list(args), str(cwd), check_env(env_extra), timeout)


def run_check_json(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "results.json"
    proc = run_check(*args, "--json", str(out))
    assert out.is_file(), f"no results.json; the grader printed:\n{proc.stdout}\n{proc.stderr}"
    return proc, json.loads(out.read_text(encoding="utf-8"))


def collected(tmp_path: Path, hw_name: str = HW) -> list[dict]:
    """Every check of a homework's graded suites as the grade for the record collects it (grader.grading.plugin._meta,
    on hidden inputs: twins and checks run only in the grade too), each with its part's id (``part``)."""
    from grader.base import homeworks
    from grader.grading.runner import PYTEST_FLAGS

    hw = homeworks.load(hw_name)
    events = tmp_path / "collected.jsonl"
    subprocess.run([sys.executable, "-m", "pytest", str(hw.tests_dir), "--collect-only", "--results-file",
                    str(events), *PYTEST_FLAGS], cwd=str(tmp_path), capture_output=True, timeout=300,
                   env=dict(os.environ, HWKIT_INPUTS="hidden", PYTHONPATH=str(ROOT)))
    items = next(json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()
                 if json.loads(line).get("event") == "collected")["items"]
    by_file = {p.tests: p.id for p in hw.parts}
    return [{**item, "part": by_file[item["nodeid"].split("::")[0].rsplit("/", 1)[-1]]} for item in items]


def run_measured(cmd: list[str], timeout: float, **popen) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``cmd`` (its output captured) and return it with the CPU seconds of that process and of every process it
    waited for, its own figure even while other processes of this one run beside it."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, **popen)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(cmd, proc.returncode, out.read().decode("utf-8", "replace"),
                                           err.read().decode("utf-8", "replace"))
    return done, usage.ru_utime + usage.ru_stime


def burner(seconds: float, module: str = "ppo") -> str:
    """A module that burns CPU: each public function of the reference's ``module`` computes for ``seconds`` of CPU
    time (just under the limit, say) and then answers 0.0, a wrong answer (tests/kit/test_batch.py, and
    benchmarks/class_with_burner.py)."""
    import ast

    source = (ROOT / "solutions" / HW / f"{module}.py").read_text(encoding="utf-8")
    names = [node.name for node in ast.parse(source).body
             if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")]
    head = (f"import time\n\n\ndef _burn():\n    end = time.process_time() + {seconds!r}\n"
            "    while time.process_time() < end:\n        pass\n")
    return head + "".join(f"\n\ndef {name}(*args, **kwargs):\n    _burn()\n    return 0.0\n" for name in names)
