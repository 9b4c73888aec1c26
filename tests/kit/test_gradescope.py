"""The Gradescope autograder (``python -m grader.gradescope OUT.zip``): the zip holds what Gradescope's
specification asks for and the kit without solutions; its ``run_autograder``, run in a temporary folder that
stands in for /autograder (setup.sh is not run: the kit's dependencies are installed here), grades the
reference solutions to full marks, a solved notebook to full marks, and the stubs, the untouched notebook, a
submission that crashes at import and an empty one to 0, writing results.json with Gradescope's documented
fields and types. The whole homework is graded once (the reference); the other cases grade two parts."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import gradescope
from grader.authoring.constraints import requirements
from grader.authoring.stubs import BEGIN
from grader.base import homeworks
from grader.base.homeworks import ROOT
from grader.gradescope import kit_files
from grader.grading import hidden_answers
from grader.grading.hidden import secret_path
from grader.grading.secret import is_default
from kit import HW

pytestmark = pytest.mark.slow  # grades whole homeworks: left out of the everyday loop (-m "not slow")

pytestmark = pytest.mark.skipif(os.name == "nt" or shutil.which("bash") is None,
                                reason="Gradescope's scripts are bash scripts for its Ubuntu image")

# Gradescope's results.json, as its autograder specification documents it (Output format; Controlling test
# case visibility; Output String Formatting; Test case status)
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
FORMATS = {"text", "html", "simple_format", "md", "ansi"}
NUMBER = (int, float)
TOP_LEVEL = {"score": NUMBER, "execution_time": int, "output": str, "output_format": FORMATS,
             "test_output_format": FORMATS, "test_name_format": FORMATS, "visibility": VISIBILITY,
             "stdout_visibility": VISIBILITY, "extra_data": dict, "tests": list, "leaderboard": list}
TEST = {"score": NUMBER, "max_score": NUMBER, "status": {"passed", "failed"}, "name": str, "name_format": FORMATS,
        "number": str, "output": str, "output_format": FORMATS, "tags": list, "visibility": VISIBILITY,
        "extra_data": dict}
PARTS = ["dp", "ppo"]  # the lighter cases grade these two parts
HIDDEN = "ppo::test_*_random"  # ... with the randomized ppo checks shown after the grades are published


def _field_ok(value, kind) -> bool:
    if isinstance(kind, set):
        return value in kind
    return isinstance(value, kind) and not isinstance(value, bool)


def validate(data: dict) -> None:
    """results.json has only Gradescope's documented fields, of the documented types, and what this kit
    promises on top: every test has a name, score, max_score, status, output and visibility, and the top-level
    score is the sum of the tests' scores."""
    assert set(data) <= set(TOP_LEVEL), set(data) - set(TOP_LEVEL)
    for key, value in data.items():
        assert _field_ok(value, TOP_LEVEL[key]), (key, value)
    assert {"score", "execution_time", "output", "visibility", "tests"} <= set(data)
    assert data["execution_time"] >= 0
    for test in data["tests"]:
        assert set(test) <= set(TEST), set(test) - set(TEST)
        for key, value in test.items():
            assert _field_ok(value, TEST[key]), (test.get("name"), key, value)
        assert {"name", "score", "max_score", "status", "output", "visibility"} <= set(test), test
        assert 0 <= test["score"] <= test["max_score"] and test["output"].strip(), test
        assert (test["status"] == "passed") == (test["score"] == test["max_score"] > 0), test
    assert data["score"] == pytest.approx(sum(t["score"] for t in data["tests"]), abs=1e-3)


def _run(*cmd, cwd=ROOT, env=None, timeout=300) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the kit under test is cwd's
    environ.update(PYTHONDONTWRITEBYTECODE="1", **(env or {}))
    return subprocess.run([str(c) for c in cmd], cwd=str(cwd), capture_output=True, text=True, encoding="utf-8",
                          env=environ, timeout=timeout)


@pytest.fixture(scope="module")
def zips(tmp_path_factory):
    out = tmp_path_factory.mktemp("gradescope")
    full, parts = out / "autograder.zip", out / "autograder-dp-ppo.zip"
    for args in ([full], [parts, HW, *PARTS, "--visibility", f"{HIDDEN}=after_published"]):
        proc = _run(sys.executable, "-m", "grader.gradescope", *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return {"full": full, "parts": parts}


def autograde(zip_path: Path, root: Path, submission: dict[str, bytes],
              env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """Do what Gradescope does: unpack the zip into ROOT/source (keeping its file modes), copy run_autograder
    to ROOT, put the submission into ROOT/submission, run ROOT/run_autograder from ROOT; read the results."""
    _unpack(zip_path, root)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    for name, data in submission.items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_bytes(data)
    (root / "submission").mkdir(exist_ok=True)
    before = {p: p.read_bytes() for p in (root / "submission").rglob("*") if p.is_file()}
    proc = _run(root / "run_autograder", cwd=root,
                env={"GRADESCOPE_ROOT": str(root), "GRADESCOPE_PYTHON": sys.executable, **(env or {})})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"the kit in {root / 'source'} " in proc.stdout, proc.stdout  # the unpacked kit grades, not this one
    after = {p: p.read_bytes() for p in (root / "submission").rglob("*") if p.is_file()}
    assert after == before, "the autograder wrote into the submission"
    text = (root / "results" / "results.json").read_text(encoding="utf-8")
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"results.json holds {c}, which is not JSON"))
    validate(data)
    assert str(root) not in text and "gradescope-" not in text, "scratch paths leak into what students read"
    assert "gradescope-" not in proc.stdout, "the log's rerun commands name a scratch folder that is gone"
    return proc, data


def _points(parts: list[str] | None = None) -> tuple[float, float]:
    hw = homeworks.load(HW)
    chosen = [p for p in hw.parts if parts is None or p.id in parts]
    return sum(p.points for p in chosen), sum(p.bonus_points for p in chosen)


def _files(folder: Path, prefix: str = "") -> dict[str, bytes]:
    return {prefix + p.name: p.read_bytes() for p in sorted(folder.glob("*.py"))}


def _unpack(zip_path: Path, root: Path) -> None:
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            path = Path(zf.extract(info, root / "source"))
            os.chmod(path, (info.external_attr >> 16) & 0o777)


def test_the_unpacked_kit_imports_only_itself(zips, tmp_path):
    """Every grader module of the zip imports, and whatever it imports at import time comes from the zip, not
    from a kit installed on this machine (an editable install would otherwise stand in for a missing module)."""
    _unpack(zips["full"], tmp_path)
    source = tmp_path / "source"
    modules = sorted(".".join(p.relative_to(source).with_suffix("").parts) for p in (source / "grader").rglob("*.py")
                     if p.stem != "__init__")
    probe = ("import importlib, json, sys\n"
             f"for name in {modules!r}:\n    importlib.import_module(name)\n"
             "print(json.dumps({n: getattr(m, '__file__', None) for n, m in sys.modules.items() "
             "if n == 'grader' or n.startswith('grader.')}))\n")
    proc = _run(sys.executable, "-c", probe, cwd=source)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "grader.gradescope" in loaded and "grader.grading.plugin" in loaded
    outside = {n: f for n, f in loaded.items() if not f or not Path(f).resolve().is_relative_to(source.resolve())}
    assert not outside, outside


def test_zip_holds_the_scripts_and_the_kit_without_solutions(zips):
    with zipfile.ZipFile(zips["full"]) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        config = json.loads(zf.read("gradescope.json"))
        required = zf.read("requirements.txt").decode("utf-8").splitlines()
        contents = {name: zf.read(name) for name in infos}
    for script in ("setup.sh", "run_autograder"):  # at the root of the archive, executable, valid bash
        assert (infos[script].external_attr >> 16) & stat.S_IXUSR, script
        assert contents[script].startswith(b"#!/usr/bin/env bash\n")
        check = subprocess.run(["bash", "-n"], input=contents[script], capture_output=True)
        assert check.returncode == 0, check.stderr
    assert required == requirements()[0] and any(r.startswith("numpy") for r in required)
    assert config["homework"] == HW and config["parts"] == [] and config["visibility"] == []
    names = set(infos)
    assert not [n for n in names if n.startswith(("solutions/", "tests/kit/", "notebooks/", "benchmarks/", "docs/"))]
    for tool in ("grader/authoring/build.py", "grader/authoring/stubs.py", "grader/authoring/release.py",
                 "grader/batch.py", "grader/authoring/notebook_build.py"):
        assert tool not in names
    hw = homeworks.load(HW)
    for part in hw.parts:
        assert f"homework/{HW}/{part.module}.py" in names and f"tests/{HW}/{part.tests}" in names
    assert {"grader/gradescope.py", "homework/check.py", "conftest.py", "pyproject.toml", f"tests/{HW}/parts.toml",
            f"homework/{HW}/envs.py", "constraints.txt"} <= names
    assert b'-c "$ROOT/source/constraints.txt" -r "$ROOT/source/requirements.txt"' in contents["setup.sh"]
    assert "grader/authoring/constraints.py" not in names
    # the instructor's secret of hidden inputs ships when the checkout holds one of its own (never the kit's default),
    # and the key's answers on its hidden inputs (grader.grading.hidden_answers) ship whether git tracks them or not
    records = {p.relative_to(ROOT).as_posix(): p.read_bytes()
               for p in hidden_answers.record_dir(hw.tests_dir).glob("*.json")}
    assert records and set(records) <= names
    own_secret = records if is_default(hw) else {secret_path(hw.tests_dir).relative_to(ROOT).as_posix():
                                                 secret_path(hw.tests_dir).read_bytes(), **records}
    assert names - {"setup.sh", "run_autograder", "requirements.txt", "gradescope.json"} == \
        set(kit_files()) | set(own_secret)
    assert all(contents[name] == data for name, data in own_secret.items())
    for path in (ROOT / "solutions" / HW).glob("*.py"):  # no solution module ships, not even renamed
        if any(BEGIN.match(line) for line in path.read_text(encoding="utf-8").splitlines()):
            assert path.read_bytes() not in contents.values(), path.name
    assert not [n for n, data in contents.items() if b"BEGIN SOLUTION" in data]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_only_tracked_files_ship(tmp_path):
    kit = tmp_path / "kit"
    for rel in ("grader/a.py", "homework/hw/b.py", "solutions/hw/b.py", "tests/kit/test_x.py", "notebooks/n.ipynb",
                "scratch.py", "homework/hw/notes.txt"):
        (kit / rel).parent.mkdir(parents=True, exist_ok=True)
        (kit / rel).write_text("x = 1\n", encoding="utf-8")
    git = ["git", "-C", str(kit), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "grader", "homework/hw/b.py", "solutions", "tests", "notebooks"], check=True)
    assert kit_files(kit) == ["grader/a.py", "homework/hw/b.py"]  # untracked scratch.py and notes.txt stay out
    shutil.rmtree(kit / ".git")  # not a checkout: every file but the exclusions
    assert kit_files(kit) == ["grader/a.py", "homework/hw/b.py", "homework/hw/notes.txt", "scratch.py"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="a root grader that cannot change user")
def test_a_container_that_confines_nothing_grades_nobody_unless_the_zip_allows_it(zips, tmp_path):
    """A container without namespaces where the code cannot get a user of its own (here: told not to): the reference
    gets 0 on every part with the reason, and the instructor's log says it too; the zip allows it only when built
    with --allow-unconfined."""
    from grader.boundary import confine

    assert json.loads(zipfile.ZipFile(zips["parts"]).read("gradescope.json"))["allow_unconfined"] is False
    submission = _files(ROOT / "solutions" / HW)
    env = {"HWKIT_CONFINE": "off", confine.SEPARATE_ENV: "off", confine.ALLOW_ENV: "0"}
    proc, data = autograde(zips["parts"], tmp_path, submission, env=env)
    assert data["score"] == 0 and data["tests"] and all(t["status"] == "failed" for t in data["tests"])
    assert all("оценка для ведомости не выставляется" in t["output"] for t in data["tests"]), data["tests"]
    assert "confinement: none" in proc.stdout and "не выставляется" in proc.stdout, proc.stdout


@pytest.mark.slow  # grades a whole homework
def test_reference_gets_full_marks_with_bonus(zips, tmp_path):
    """A whole repository uploaded: the reference modules where the stubs were, the untouched notebook beside."""
    submission = _files(ROOT / "solutions" / HW, f"rl-hw/homework/{HW}/")
    submission[f"rl-hw/notebooks/{HW}.ipynb"] = (ROOT / "notebooks" / f"{HW}.ipynb").read_bytes()
    _, data = autograde(zips["full"], tmp_path, submission)
    points, bonus = _points()
    assert data["score"] == pytest.approx(points + bonus, abs=1e-6) and bonus > 0
    assert sum(t["max_score"] for t in data["tests"]) == pytest.approx(points + bonus, abs=0.01)
    assert all(t["status"] == "passed" and t["visibility"] == "visible" for t in data["tests"])
    assert {t["extra_data"]["part"] for t in data["tests"]} == {p.id for p in homeworks.load(HW).parts}
    assert f"баллы: {points:g} из {points:g}" in data["output"] and f"бонус: {bonus:g} из {bonus:g}" in data["output"]
    assert f"rl-hw/homework/{HW}/" in data["output"] and "не проверялась" in data["output"]


def _solved_notebook(tmp_path: Path) -> bytes:
    out = tmp_path / "solved.ipynb"
    proc = _run(sys.executable, "-m", "grader.authoring.notebook_build", HW, "--solved", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out.read_bytes()


CRASH = {"dp.py": b"import numpy as np\n\nSCALE = 1 / 0\n",
         "ppo.py": "import numpy as np\nimport несуществующий_модуль\n".encode("utf-8"),
         # graded suites and a conftest of the student's own: never used, the kit's suites grade
         f"tests/{HW}/test_dp.py": b"def test_chain_evaluation():\n    pass\n",
         "conftest.py": b"import pytest\n\n\ndef pytest_runtest_call(item):\n    pass\n"}


@pytest.mark.parametrize("case", ["stubs", pytest.param("notebook", marks=pytest.mark.slow), "crash", "empty",
                                  pytest.param("solved_notebook", marks=pytest.mark.slow)])  # notebooks: slow
def test_two_parts_with_hidden_checks(zips, tmp_path, case):
    if case == "stubs":
        submission = _files(ROOT / "homework" / HW)
    elif case == "notebook":
        submission = {f"{HW}.ipynb": (ROOT / "notebooks" / f"{HW}.ipynb").read_bytes()}
    elif case == "crash":
        submission = CRASH
    elif case == "empty":
        submission = {"README.txt": "решение потом".encode("utf-8")}
    else:  # the untouched stubs with a solved notebook: the notebook is graded
        submission = {**_files(ROOT / "homework" / HW, f"homework/{HW}/"), "my.ipynb": _solved_notebook(tmp_path)}
    _, data = autograde(zips["parts"], tmp_path / "root", submission)
    points, bonus = _points(PARTS)
    assert {t["extra_data"]["part"] for t in data["tests"]} == set(PARTS)
    if case == "solved_notebook":
        assert data["score"] == pytest.approx(points + bonus, abs=1e-6)
        assert all(t["status"] == "passed" for t in data["tests"])
        assert "Проверена тетрадка my.ipynb" in data["output"] and "нетронутые заготовки" in data["output"]
    else:
        assert data["score"] == 0 and all(t["status"] == "failed" for t in data["tests"])
    outputs = [t["output"] for t in data["tests"]]
    if case in ("stubs", "notebook"):
        assert all("не реализовано" in o for o in outputs), outputs[0]
        assert case == "notebook" or "совпадают с заготовками" in data["output"]
    elif case == "crash":
        assert all("не удалось загрузить" in o for o in outputs), outputs[0]
        assert "не удалось загрузить dp.py: ZeroDivisionError" in data["output"]
        assert "не удалось загрузить ppo.py: ModuleNotFoundError" in data["output"]
    elif case == "empty":
        assert len(data["tests"]) == len(PARTS) and "нет решения" in outputs[0]
        assert "ни тетрадки .ipynb" in data["output"]
    if case != "empty":  # the randomized ppo checks are shown after publishing; the scoreboard does not tell them
        hidden = [t for t in data["tests"] if t["extra_data"]["part"] == "ppo"
                  and t["extra_data"]["check"].split("[")[0].endswith("_random")]
        assert len(hidden) >= 4 and all(t["visibility"] == "after_published" for t in hidden)
        assert all(t["visibility"] == "visible" for t in data["tests"] if t not in hidden)
        assert f"результаты которых будут видны после публикации оценок: {len(hidden)} " in data["output"]
        assert not [t["name"] for t in hidden if t["name"].split("] ", 1)[1] in data["output"]]
        shown = sum(t["max_score"] for t in data["tests"] if t["visibility"] == "visible" and
                    not t["extra_data"]["bonus"])
        assert f"из {shown:.2f}".rstrip("0").rstrip(".") in data["output"]


@pytest.mark.parametrize("args,says", [
    (["--visibility", "ppo::test_no_such_check=after_published"], "no check of test_ppo.py"),
    (["--visibility", "ppo=sometimes"], "the level must be one of"),
    ([HW, "ppo", "--visibility", "dp=after_published"], "not graded by this autograder"),
    ([HW, "nonexistent"], "nonexistent"),
], ids=["unknown_check", "unknown_level", "part_not_graded", "unknown_part"])
def test_wrong_options_write_nothing(tmp_path, args, says):
    out = tmp_path / "autograder.zip"
    proc = _run(sys.executable, "-m", "grader.gradescope", out, *args)
    assert proc.returncode == 1 and says in proc.stderr, proc.stdout + proc.stderr
    assert not out.exists()


def test_staging_follows_no_link_and_takes_no_huge_file(tmp_path):
    hw = homeworks.load(HW)
    upload = tmp_path / "submission"
    (upload / "homework" / HW).mkdir(parents=True)
    secret = tmp_path / "outside" / "ppo.py"  # a file of the autograder's machine, outside the upload
    secret.parent.mkdir()
    secret.write_text((ROOT / "solutions" / HW / "ppo.py").read_text(encoding="utf-8"), encoding="utf-8")
    os.symlink(secret, upload / "homework" / HW / "ppo.py")  # a link in place of a module
    os.symlink(secret.parent, upload / "more")  # a link to a folder
    (upload / "dp.py").write_text("x = 1\n", encoding="utf-8")
    found = gradescope.find_submission(hw, upload, ["ppo", "dp"])
    assert found.kind == "modules" and set(found.modules) == {"dp"}, (found.kind, found.modules)
    (upload / "dp.py").write_bytes(b"#" * (gradescope.FILE_LIMIT + 1))
    with pytest.raises(OSError):
        gradescope.find_submission(hw, upload, ["dp"])


def test_the_pinned_base_install_is_the_kits_tests_and_the_autograders():
    """constraints.txt pins every base dependency for the Python running these tests (as CI installs them), with
    markers pip reads; README's command for the kit's tests and CI install with it."""
    from packaging.requirements import Requirement

    pins = [Requirement(line) for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
    applying = [r for r in pins if r.marker is None or r.marker.evaluate()]
    here = {r.name.lower(): r for r in applying}
    assert len(here) == len(applying), "two versions of one package for this Python"
    for dep in requirements()[0]:
        wanted = Requirement(dep)
        if wanted.marker is None or wanted.marker.evaluate():
            pin = here.get(wanted.name.lower())
            assert pin is not None and str(pin.specifier).startswith("=="), f"{wanted.name} is not pinned here"
            assert wanted.specifier.contains(str(pin.specifier)[2:]), f"{pin} does not meet {wanted}"
    assert '-c constraints.txt -e ".[dev]"' in (ROOT / "README.md").read_text(encoding="utf-8")
    assert '-c constraints.txt -e ".[dev]"' in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
