"""Shared helpers of the kit's own tests: running the grader's command line and reading its JSON."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from grader.homeworks import ROOT

HW = "s6-hw00-rl-foundations"
CHECK = [sys.executable, str(ROOT / "homework" / "check.py")]


def run_check(*args: str, cwd: Path = ROOT, timeout: float = 300,
              env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env_extra or {}))
    return subprocess.run([*CHECK, *args], cwd=str(cwd), capture_output=True, text=True, encoding="utf-8",
                          timeout=timeout, env=env)


def run_check_json(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "results.json"
    proc = run_check(*args, "--json", str(out))
    assert out.is_file(), f"no results.json; the grader printed:\n{proc.stdout}\n{proc.stderr}"
    return proc, json.loads(out.read_text(encoding="utf-8"))
