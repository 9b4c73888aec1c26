"""The student's copy (``python -m grader.authoring.release OUT``): no solutions, no instructor tools; it installs,
grades its stubs to 0 and says clearly that it has no solutions. Also the GitHub Classroom workflow it carries."""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from grader.authoring.release import ReleaseError, release, student_content, student_files, student_readme
from grader.authoring.stubs import BEGIN, END
from grader.base import homeworks
from grader.base.homeworks import ROOT
from kit import HW

pytestmark = pytest.mark.slow  # grades whole homeworks: left out of the everyday loop (-m "not slow")


def _run(*cmd, cwd, env=None, timeout=600):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env or {}))
    return subprocess.run(list(cmd), cwd=str(cwd), capture_output=True, text=True, encoding="utf-8", env=env,
                          timeout=timeout)


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "student"
    proc = _run(sys.executable, "-m", "grader.authoring.release", str(out), "--classroom", cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def graded_copy(copy, tmp_path_factory):
    results = tmp_path_factory.mktemp("copy-results") / "results.json"
    proc = _run(sys.executable, "homework/check.py", HW, "--json", str(results), cwd=copy)
    return proc, json.loads(results.read_text(encoding="utf-8"))


def test_copy_has_no_solutions_no_kit_tests_no_instructor_tools(copy):
    files = {p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()}
    left_out = ("solutions/", "tests/kit/", "benchmarks/grading_speed", "benchmarks/cliff_margins",
                "benchmarks/kit_suite", "benchmarks/boss_margins", "docs/", ".ci/")
    assert not [f for f in files if f.startswith(left_out)]
    assert "benchmarks/boss_ppo_vs_reinforce.py" in files  # the task statement tells students to run it
    for tool in ("grader/authoring/build.py", "grader/authoring/stubs.py", "grader/authoring/release.py",
                 "grader/batch.py",
                 "grader/authoring/notebook_build.py", "grader/gradescope.py", "grader/reporting/class_report.py",
                 "grader/reporting/class_report.schema.json", "benchmarks/class_report.py"):
        assert tool not in files
    hw = homeworks.load(HW)
    for part in hw.parts:  # what a student needs is there
        assert f"homework/{HW}/{part.module}.py" in files and f"tests/{HW}/{part.tests}" in files
    assert {"homework/check.py", "pyproject.toml", "README.md", f"tests/{HW}/parts.toml"} <= files
    assert not any("__pycache__" in f or f.endswith(".egg-info") for f in files)


def test_no_solution_code_in_the_copy(copy):
    """No line of a solution region (long enough to be telling) appears in a file of the copy, tests aside."""
    region_lines, provided = set(), set()  # lines inside solution regions; lines of the code students get
    for path in (ROOT / "solutions" / HW).glob("*.py"):
        inside = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if BEGIN.match(line):
                inside = True
            elif END.match(line):
                inside = False
            elif inside and len(line.strip()) >= 30 and not line.strip().startswith("#"):
                region_lines.add(line.strip())
            else:
                provided.add(line.strip())
    task = (ROOT / "homework" / HW / "README.md").read_text(encoding="utf-8")  # may quote boilerplate lines
    shown = "\n".join(provided)  # a docstring may quote a line of its region: the author shows it on purpose
    region_lines = {line for line in region_lines if line not in shown and line not in task}
    assert len(region_lines) >= 20, "too few telling solution lines: the check below would prove little"
    leaks = []
    for path in copy.rglob("*"):
        rel = path.relative_to(copy).as_posix()
        if not path.is_file() or rel.startswith("tests/"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb":  # the notebook's sources, as they are shown
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
        leaks += [f"{rel}: {line}" for line in region_lines if line in text]
        assert "BEGIN SOLUTION" not in text, rel
    assert not leaks, "\n".join(leaks[:10])


def test_copy_grades_its_stubs_to_zero_without_tracebacks(graded_copy):
    proc, data = graded_copy
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert data["score"] == 0 and len(data["tests"]) >= 30
    not_todo = [t["name"] for t in data["tests"] if t.get("extra_data", {}).get("kind") != "todo"]
    assert not not_todo, not_todo
    assert {t["extra_data"]["part"] for t in data["tests"]} == {p.id for p in homeworks.load(HW).parts}


def test_copy_says_clearly_it_has_no_solutions(copy):
    proc = _run(sys.executable, "homework/check.py", HW, "--solutions", cwd=copy)
    assert proc.returncode == 2
    assert "эталонных решений в этой копии нет" in proc.stderr and "Traceback" not in proc.stderr


def test_copy_installs_and_imports_its_own_grader(copy, tmp_path):
    """pip builds and installs the copy (without dependencies; the build backend comes from PyPI unless `wheel` is
    installed here); the installed grader is the copy's own, complete without the instructor's modules."""
    import importlib.util

    source = tmp_path / "src"
    subprocess.run([sys.executable, "-c", "import shutil, sys; shutil.copytree(sys.argv[1], sys.argv[2])",
                    str(copy), str(source)], check=True)
    target = tmp_path / "site"
    offline = ["--no-build-isolation", "--no-index"] if importlib.util.find_spec("wheel") else []  # else: from PyPI
    proc = _run(sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *offline,
                "--disable-pip-version-check", "--target", str(target), str(source), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    installed = {p.relative_to(target / "grader").as_posix() for p in (target / "grader").rglob("*.py")}
    assert {"cli.py", "grading/runner.py", "grading/plugin.py", "grading/checks.py", "boundary/loading.py",
            "boundary/worker.py"} <= installed
    assert not installed & {"authoring/build.py", "authoring/stubs.py", "authoring/release.py", "batch.py",
                            "authoring/notebook_build.py", "gradescope.py", "reporting/class_report.py"}
    assert not [name for name in installed if name.startswith("authoring/")]
    code = ("import sys, grader.cli, grader.grading.plugin, grader.grading.runner, grader.reporting.export\n"
            "mods = [m for m in sys.modules.values() if m.__name__.split('.')[0] == 'grader']\n"
            "assert all(m.__file__.startswith(sys.argv[1]) for m in mods), [m.__file__ for m in mods]\n"
            "print(len(mods))")
    proc = _run(sys.executable, "-c", code, str(target), cwd=tmp_path, env={"PYTHONPATH": str(target)})
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_copy_readme_has_no_instructor_parts(copy):
    text = (copy / "README.md").read_text(encoding="utf-8")
    assert "## For instructors" not in text and "grader.authoring.release" not in text and "--solutions" not in text
    assert "python homework/check.py" in text  # the student's part stays


def test_copy_pyproject_is_written_for_the_student(copy):
    text = (copy / "pyproject.toml").read_text(encoding="utf-8")
    assert "instructor" not in text and "ruff" not in text and "tests/kit" not in text and "slow" not in text
    assert "dev =" not in text and 'testpaths = ["tests"]' in text and "notebook = [" in text


def test_student_readme_drops_marked_regions_and_the_instructor_section():
    text = ("# T\n\nкоманда студента\n<!-- instructor -->\nкит\n<!-- /instructor -->\n## Для студента\nа\n"
            "## For instructors\nрешения\n## Лицензия\nMIT\n")
    assert student_readme(text) == "# T\n\nкоманда студента\n## Для студента\nа\n## Лицензия\nMIT\n"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_only_tracked_files_are_released_and_the_exclusions_still_apply(tmp_path):
    kit = tmp_path / "kit"
    for rel in ("grader/cli.py", "grader/authoring/build.py", "grader/gradescope.py", "homework/hw/a.py",
                "solutions/hw/a.py",
                "tests/kit/test_x.py", "tests/hw/test_a.py", "scratch.py", "homework/hw/answers.txt"):
        (kit / rel).parent.mkdir(parents=True, exist_ok=True)
        (kit / rel).write_text("x = 1\n", encoding="utf-8")
    git = ["git", "-C", str(kit), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "grader", "homework/hw/a.py", "solutions", "tests"], check=True)
    tracked = ["grader/cli.py", "homework/hw/a.py", "tests/hw/test_a.py"]
    assert [p.as_posix() for p in student_files(kit)] == tracked  # untracked scratch.py, answers.txt stay out
    shutil.rmtree(kit / ".git")  # not a checkout: every file but the exclusions
    assert [p.as_posix() for p in student_files(kit)] == sorted(tracked + ["homework/hw/answers.txt", "scratch.py"])


def test_release_refuses_a_folder_inside_the_repository_or_not_empty(tmp_path):
    with pytest.raises(ReleaseError):
        release(ROOT / "out-release-test")
    assert not (ROOT / "out-release-test").exists()
    (tmp_path / "x.txt").write_text("x")
    with pytest.raises(ReleaseError):
        release(tmp_path)


# ---- the GitHub Classroom workflow ---------------------------------------------------------------

def test_classroom_workflow_is_valid_and_its_points_step_reports_partial_credit(copy, tmp_path):
    yaml = pytest.importorskip("yaml", reason="PyYAML comes with the dev extra: pip install -e '.[dev]'")
    workflow = yaml.safe_load((copy / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    grade = next(s for s in steps if s.get("name") == "Grade")
    assert f"python homework/check.py {HW} --json results.json" in grade["run"]
    points = next(s for s in steps if s.get("id") == "grader")
    reporter = next(s for s in steps if "autograding-grading-reporter" in s.get("uses", ""))
    assert reporter["with"]["runners"] == "grader"
    assert "steps.grader.outputs.result" in reporter["env"]["GRADER_RESULTS"]
    script = re.search(r"<<'EOF'\n(.*?)\nEOF", points["run"], re.S).group(1)

    # run the step's script on a partly solved homework: the reference ppo.py, every other part a stub
    folder = tmp_path / "partly"
    folder.mkdir()
    for path in (ROOT / "homework" / HW).glob("*.py"):
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "ppo.py").write_bytes((ROOT / "solutions" / HW / "ppo.py").read_bytes())
    _run(sys.executable, "homework/check.py", HW, "--dir", str(folder), "--json", str(tmp_path / "results.json"),
         cwd=copy)
    out = tmp_path / "github_output"
    proc = _run(sys.executable, "-c", script, cwd=tmp_path, env={"GITHUB_OUTPUT": str(out)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    key, _, value = out.read_text(encoding="utf-8").strip().partition("=")
    result = json.loads(base64.b64decode(value))
    assert key == "result" and result["status"] == "fail"
    assert result["max_score"] == pytest.approx(sum(p.points for p in homeworks.load(HW).parts))
    points = sum(t["score"] for t in result["tests"])  # what the reporter adds up and posts
    total = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["score"]
    assert points == total == pytest.approx(20 + 2, abs=0.01) and points == round(points, 2)  # ppo and its bonus
    assert {t["status"] for t in result["tests"]} == {"pass", "fail"}


def test_the_release_refuses_a_copy_that_would_hold_the_answer_key():
    """#26: no key file, no secret, no key function's body pasted into a shipped module
    (grader.authoring.release.key_leaks)."""
    from grader.authoring.release import key_leaks

    clean = {rel.as_posix(): student_content(rel) for rel in student_files()}
    assert key_leaks(clean) == []
    key_source = (ROOT / "tests" / HW / "key" / "ppo.py").read_bytes()
    pasted = dict(clean, **{f"tests/{HW}/test_extra.py": key_source})
    assert any("test_extra.py" in leak for leak in key_leaks(pasted))
    assert key_leaks(dict(clean, **{f"tests/{HW}/key/ppo.py": key_source}))


@pytest.mark.parametrize("where", ["kit", "copy"])
def test_a_virtual_environment_at_the_root_is_git_ignored(where, copy, tmp_path):
    """The quick start makes .venv at the root of the kit and of the student's copy: `git add -A` must not stage
    it (nor a venv/)."""
    ignore = (ROOT if where == "kit" else copy) / ".gitignore"
    assert ignore.is_file()
    repo = tmp_path / "repo"
    for rel in (".venv/bin/python", "venv/lib/site.py", "homework/a.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("x = 1\n", encoding="utf-8")
    shutil.copy(ignore, repo / ".gitignore")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    staged = subprocess.run([*git, "diff", "--cached", "--name-only"], capture_output=True, text=True,
                            check=True).stdout.split()
    assert staged == [".gitignore", "homework/a.py"]
