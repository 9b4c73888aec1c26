"""Nothing hidden shown early (#36, item 2): what a student reads of the grade holds nothing of a hidden input.

- The checks on hidden inputs (hidden twins, checks run only in the grade, ``behaviour=True`` checks: grader.hidden)
  of a checking process run after all its public ones, in workers of their own: with Linux namespaces forked by a
  zygote of their own (another /tmp, other scratch folders, another PID namespace), without them run as the lease's
  hidden twin, under umask 077, refused chmod, umask, symbolic links and extended attributes.
- Without ``--show-hidden`` a failure on hidden inputs keeps its verdict and the typical mistake its check named,
  never its inputs, its expected values or the student's text (grader.runner.withheld); on Gradescope it is shown no
  sooner than ``--hidden-inputs-visibility``, by a field set from the collection's marks.
"""
from __future__ import annotations

import json
import subprocess
import sys

from grader.homeworks import ROOT
from kit import HW, check_env

PARTS = ["ppo", "control"]


def test_checks_on_hidden_inputs_run_after_every_public_check_of_every_part(tmp_path):
    """In one checking process (two parts), no public check runs after a check on hidden inputs; the results keep
    the test files' order, where each twin follows its public case."""
    from grader.runner import PYTEST_FLAGS

    events = tmp_path / "events.jsonl"
    files = [str(ROOT / "tests" / HW / f"test_{part}.py") for part in PARTS]
    proc = subprocess.run([sys.executable, "-m", "pytest", *files, "--collect-only", "--impl", "solutions",
                           "--results-file", str(events), *PYTEST_FLAGS], cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=300, env=check_env({"HWKIT_INPUTS": "hidden", "PYTHONPATH": str(ROOT),
                                                                  "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}))
    ran = [line.strip() for line in proc.stdout.splitlines() if "::" in line]
    collected = next(json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()
                     if json.loads(line).get("event") == "collected")["items"]
    hidden = {item["nodeid"] for item in collected if item["hidden"]}
    assert hidden and len(ran) == len(collected), proc.stdout[-2000:] + proc.stderr[-2000:]
    first = min(i for i, nodeid in enumerate(ran) if nodeid in hidden)
    assert not [nodeid for nodeid in ran[first:] if nodeid not in hidden], "a public check runs after a hidden one"
    assert {part for part in PARTS if any(f"test_{part}.py" in nodeid for nodeid in ran[:first])} == set(PARTS)
    order = [item["nodeid"] for item in collected]
    assert order != ran and sorted(order) == sorted(ran)
    assert any(order[i] in hidden and order[i + 1] not in hidden for i in range(len(order) - 1))  # the files' order
