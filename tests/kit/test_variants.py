"""Correct solutions written unlike the reference get full marks: the graded checks judge the task statement's
contract, not the reference's way of writing it.

Each part of the loop-heavy variant (tests/kit/variants/<hw>/loop_heavy/: explicit Python loops where the
reference vectorizes, and its own order of random draws where the statement leaves it free) is graded once,
through the command line as a student's folder, and every one of its checks, bonus included, must pass.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from grader.base import homeworks
from kit import HW, run_check_json

pytestmark = pytest.mark.slow  # grades whole homeworks: left out of the everyday loop (-m "not slow")

VARIANT = Path(__file__).resolve().parent / "variants" / HW / "loop_heavy"
PARTS = [part.id for part in homeworks.load(HW).parts]


@pytest.mark.parametrize("part", PARTS)
def test_loop_heavy_variant_gets_full_marks(part, tmp_path):
    proc, data = run_check_json(tmp_path, HW, part, "--dir", str(VARIANT), "--jobs", "1")
    checks = data["tests"]
    assert checks, f"no check of part {part} was graded:\n{proc.stdout}\n{proc.stderr}"
    assert all(t["extra_data"]["part"] == part for t in checks)
    failed = [f"{t['name']} ({t['status']})\n{t.get('output', '')}" for t in checks if t["status"] != "passed"]
    assert not failed, f"checks of part {part} that reject the loop-heavy variant:\n\n" + "\n\n".join(failed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "100%" in proc.stdout, proc.stdout
