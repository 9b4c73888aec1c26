"""A second homework is added with folders only (tests/kit/second_homework/README.md).

In a temporary copy of the kit that holds its grader and tools but none of the first homework (so nothing of
that homework can stand in for the new one), the tiny homework ``hw-tiny`` is laid over as folders; then the
copy's own commands build its stubs and notebook, grade its reference to 100% and its stubs to 0 ("не
реализовано"), grade its notebook both ways, release it and build its Gradescope zip. No file of grader/ differs
from the kit's.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from grader.authoring.release import select_files
from grader.base.homeworks import ROOT
from kit import HW

pytestmark = pytest.mark.slow  # grades whole homeworks: left out of the everyday loop (-m "not slow")

FIXTURE = Path(__file__).resolve().parent / "second_homework"
TINY = "hw-tiny"
# what the copy leaves out of the kit: the first homework and everything that is not the grader or its tools
LEFT_OUT = ["solutions", "notebooks", "tests", f"homework/{HW}", "benchmarks", "docs", ".ci", ".github", ".git",
            "__pycache__", "*.egg-info", ".pytest_cache", ".venv", "venv", "out"]


def _run(*cmd, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the copy's grader, not this kit's
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([str(c) for c in cmd], cwd=str(cwd), capture_output=True, text=True, encoding="utf-8",
                          env=env, timeout=300)


def _grade(kit: Path, *args) -> tuple[subprocess.CompletedProcess, dict]:
    results = kit.parent / "results.json"
    results.unlink(missing_ok=True)
    proc = _run(sys.executable, "homework/check.py", TINY, *args, "--json", results, cwd=kit)
    assert results.is_file(), proc.stdout + proc.stderr
    return proc, json.loads(results.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    """The copy of the kit with hw-tiny laid over it, built by the copy's own ``python -m grader.authoring.build``."""
    kit = tmp_path_factory.mktemp("second") / "kit"
    for rel in select_files(ROOT, LEFT_OUT):  # the tracked files, when the kit is a git checkout
        (kit / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, kit / rel)
    # the new homework's folders (homework/ holds check.py already; no file of the copy is replaced)
    shutil.copytree(FIXTURE / "homework", kit / "homework", dirs_exist_ok=True)
    shutil.copytree(FIXTURE / "solutions", kit / "solutions")
    shutil.copytree(FIXTURE / "tests", kit / "tests")
    proc = _run(sys.executable, "-m", "grader.authoring.build", cwd=kit)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return kit


def test_the_copy_has_the_kits_grader_and_only_the_new_homework(kit):
    grader = sorted(p.relative_to(kit).as_posix() for p in (kit / "grader").glob("*.py"))
    assert grader and all((kit / rel).read_bytes() == (ROOT / rel).read_bytes() for rel in grader)
    assert sorted(p.name for p in (kit / "tests").iterdir()) == [TINY]
    assert not (kit / "homework" / HW).exists() and not (kit / "solutions" / HW).exists()


def test_build_writes_the_stub_the_provided_module_and_the_notebook(kit):
    assert _run(sys.executable, "-m", "grader.authoring.build", "--check", cwd=kit).returncode == 0
    records = json.loads((kit / "tests" / TINY / "answers" / "returns.json").read_text(encoding="utf-8"))
    assert [e["function"] for e in records["entries"]] == ["explicit_sum"] * 3  # the key's answers, by folder
    stub = (kit / "homework" / TINY / "returns.py").read_text(encoding="utf-8")
    assert 'raise NotImplementedError("TODO: discounted_return")' in stub and "reversed" not in stub
    provided = (FIXTURE / "solutions" / TINY / "plots.py").read_bytes()
    assert (kit / "homework" / TINY / "plots.py").read_bytes() == provided
    nb = nbformat.read(str(kit / "notebooks" / f"{TINY}.ipynb"), as_version=4)
    cells = {c.id: c for c in nb.cells}
    assert 'check("returns::test_courier")' in cells["intro"].source  # the homework's own example
    assert "import plots" in cells["setup"].source and f'HOMEWORK = "{TINY}"' in cells["setup"].source
    assert cells["returns-check"].source.endswith('check("returns")')
    assert cells["returns-plot-1"].source == "plots.by_gamma(discounted_return)"
    assert cells["returns-plot-1"].metadata["tags"] == ["skip-grading"]
    assert "def discounted_return(rewards, gamma):" in cells["returns-discounted_return"].source


def test_the_reference_gets_100_percent_and_the_stubs_0(kit):
    proc, data = _grade(kit, "--solutions")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert data["score"] == 10 and [t["status"] for t in data["tests"]] == ["passed", "passed"]
    proc, data = _grade(kit)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert data["score"] == 0 and len(data["tests"]) == 2
    assert all(t["extra_data"]["kind"] == "todo" for t in data["tests"]), data["tests"]
    assert "не реализовано" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr


def test_the_notebook_is_graded_like_the_modules(kit, tmp_path):
    proc, data = _grade(kit, "--notebook", f"notebooks/{TINY}.ipynb")
    assert proc.returncode == 1 and data["score"] == 0 and "не реализовано" in proc.stdout, proc.stdout
    solved = tmp_path / "solved.ipynb"
    assert _run(sys.executable, "-m", "grader.authoring.notebook_build", TINY, "--solved", solved,
                cwd=kit).returncode == 0
    proc, data = _grade(kit, "--notebook", solved)
    assert proc.returncode == 0 and data["score"] == 10, proc.stdout + proc.stderr
    assert "не выполнились" not in proc.stdout, proc.stdout  # the setup cell imports the homework's plots


def test_release_carries_what_the_homework_needs(kit, tmp_path):
    out = tmp_path / "student"
    proc = _run(sys.executable, "-m", "grader.authoring.release", out, cwd=kit)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {f"homework/{TINY}/returns.py", f"homework/{TINY}/plots.py", f"homework/{TINY}/README.md",
            f"notebooks/{TINY}.ipynb", f"tests/{TINY}/parts.toml", f"tests/{TINY}/test_returns.py"} <= files
    assert not [f for f in files
                if f.startswith("solutions/") or f in ("grader/authoring/build.py", "grader/authoring/stubs.py")]
    assert f"tests/{TINY}/answers/returns.json" in files and not [f for f in files if "/key/" in f]
    proc = _run(sys.executable, "homework/check.py", TINY, cwd=out)
    assert proc.returncode == 1 and "не реализовано" in proc.stdout, proc.stdout + proc.stderr
    proc = _run(sys.executable, "homework/check.py", TINY, "--dir", kit / "solutions" / TINY, cwd=out)
    assert proc.returncode == 0 and "Итого самопроверки: 10 из 10" in proc.stdout, proc.stdout + proc.stderr


def test_a_table_of_the_public_answers_scores_nothing_in_the_grade(kit, tmp_path):
    """The copy holds the inputs of its checks, so a submission can memorize their answers; the instructor's grade
    runs the random episodes on hidden seeds as well, and the worked example counts only with them."""
    import numpy as np

    rng = np.random.default_rng(0)
    known = {round(float(r[0]), 9): float(np.sum(0.95 ** np.arange(len(r)) * r))
             for r in (rng.normal(size=n) for n in (1, 5, 20))}
    known[1.0] = 2.62
    lookup = tmp_path / "lookup"
    lookup.mkdir()
    (lookup / "returns.py").write_text(f"KNOWN = {known!r}\n\n\ndef discounted_return(rewards, gamma):\n"
                                       "    return KNOWN[round(float(rewards[0]), 9)]\n", encoding="utf-8")
    proc, data = _grade(kit, "--dir", lookup, "--public")
    assert data["score"] == 10, proc.stdout  # it did memorize every public answer
    proc, data = _grade(kit, "--dir", lookup)
    assert data["score"] == 0 and data["extra_data"]["inputs"] == "hidden", proc.stdout
    assert "на скрытых входах" in proc.stdout, proc.stdout


def test_gradescope_zip_carries_the_homework(kit, tmp_path):
    out = tmp_path / "autograder.zip"
    proc = _run(sys.executable, "-m", "grader.gradescope", out, TINY, cwd=kit)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = set(zipfile.ZipFile(out).namelist())
    assert {f"homework/{TINY}/returns.py", f"homework/{TINY}/plots.py", f"tests/{TINY}/test_returns.py",
            f"tests/{TINY}/key/returns.py", "grader/gradescope.py"} <= names  # the grade's answer key too
    assert not [n for n in names if n.startswith(("solutions/", "notebooks/"))]
