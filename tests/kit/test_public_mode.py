"""The student's copy grades exactly as the instructor's public mode (#26): same verdicts, same feedback.

The copy holds no answer key (tests/<hw>/key/); on public inputs both sides read the same recorded answers
(tests/<hw>/answers/), and a public run never loads the key (grader.grading.key: only hidden inputs and recording do),
so the copy's scoreboard is the instructor's ``--public`` one. Shown here on whole gradings: the reference, the
stubs, and the catalogue's mistakes, one per part at a time in one submission (the catalogue itself is graded on
public inputs, tests/kit/catalogue.py, so every mutant's verdict and feedback are the public mode's).
"""
from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from catalogue import CASES
from grader.authoring import release
from grader.base import homeworks
from grader.base.homeworks import ROOT
from kit import HW, run_check

pytestmark = pytest.mark.slow  # whole gradings on both sides


@pytest.fixture(scope="module")
def copy() -> Path:
    """The copy where a student keeps it: a folder every user may pass through, as the kit's is, so that a root
    grader runs its worker as a user of its own for both (pytest's temporary folders are closed to other users)."""
    base = Path(tempfile.mkdtemp(prefix="copy-"))
    os.chmod(base, 0o755)
    release.release(base / "student")
    yield base / "student"
    shutil.rmtree(base, ignore_errors=True)


def _mutated(tmp: Path, rank: int) -> Path:
    """The reference with the ``rank``-th mistake of each part's catalogue (one per part, every part at once)."""
    hw = homeworks.load(HW)
    folder = tmp / f"mutants{rank}"
    shutil.copytree(hw.solutions_dir, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for part in hw.parts:
        mutants = [p for p in CASES if p.parent.name == part.id]
        if mutants:
            module = folder / f"{part.module}.py"
            module.write_text(module.read_text(encoding="utf-8") + "\n\n# ---- mutant ----\n"
                              + mutants[rank % len(mutants)].read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def _said(proc, root: Path) -> str:
    """What the grader said, the kit's folder and the uid leased for the code (whichever was free) aside."""
    said = (proc.stdout + proc.stderr).replace(str(root), "ROOT").replace(str(ROOT), "ROOT")
    return re.sub(r"\(uid \d+\)", "(uid N)", said)


def test_the_copy_holds_the_instructors_checks_records_and_grader_byte_for_byte(copy):
    shipped = [p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()]
    assert not [rel for rel in shipped if "/key/" in rel or rel.startswith("solutions/")]
    assert [rel for rel in shipped if rel.startswith(f"tests/{HW}/answers/")]
    for rel in shipped:
        if rel.startswith(("grader/", f"tests/{HW}/", f"homework/{HW}/")):
            assert (copy / rel).read_bytes() == (ROOT / rel).read_bytes(), rel


@pytest.mark.parametrize("which", ["reference", "stubs", "mutants0"])
def test_a_submission_reads_the_same_in_the_copy_and_in_the_instructors_public_mode(copy, tmp_path, which):
    if which == "reference":
        folder = homeworks.load(HW).solutions_dir
    elif which == "stubs":
        folder = homeworks.load(HW).homework_dir
    else:
        folder = _mutated(tmp_path, int(which[-1]))
    theirs = subprocess.run([sys.executable, str(copy / "homework" / "check.py"), HW, "--dir", str(folder)],
                            cwd=str(copy), capture_output=True, text=True, encoding="utf-8", timeout=600,
                            env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    ours = run_check(HW, "--dir", str(folder), "--public")
    assert "самопроверк" in theirs.stdout, theirs.stdout
    assert (theirs.returncode, _said(theirs, copy)) == (ours.returncode, _said(ours, ROOT)), "\n".join(
        difflib.unified_diff(_said(theirs, copy).splitlines(), _said(ours, ROOT).splitlines(), lineterm=""))
