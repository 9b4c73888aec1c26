"""Batch grading: ``check.py HW --batch DIR`` grades every submission, isolated, and writes one CSV row each.

The submissions are real: the reference `ppo.py`, a notebook holding it, and broken ones (hang on import,
os._exit, a syntax error, one that tries to overwrite a classmate's file). Only the part `ppo` is graded.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from grader.base import homeworks
from grader.base.homeworks import ROOT
from grader.base.results import CheckResult, PartResult, Totals
from grader.batch import _Progress, summary
from grader.boundary import confine
from grader.grading.submissions import Submission
from kit import HW, MODES, burner, mode_env, run_check
from test_robustness import snapshot

pytestmark = pytest.mark.slow  # grades whole homeworks: left out of the everyday loop (-m "not slow")

SOLUTION = (ROOT / "solutions" / HW / "ppo.py").read_text(encoding="utf-8")

SUBMISSIONS = {  # name -> ppo.py, or None for a notebook
    "anna": SOLUTION,
    "boris": "while True:\n    pass\n",
    "clara": None,
    "dmitry": SOLUTION + "\n\ndef broken(:\n    pass\n",
    "elena": "import os\nos._exit(0)\n",
    # tries to break a classmate's work: overwrites anna's ppo.py and writes next to itself
    "greta": None,  # a folder holding one notebook
    "ivan": (ROOT / "homework" / HW / "ppo.py").read_text(encoding="utf-8"),  # the untouched stub: graded 0
    "fedor": SOLUTION + "\n\nfrom pathlib import Path as _P\n"
             "_here = _P(__file__).resolve().parent\n"
             "for _p in [_here.parent / 'anna' / 'ppo.py', _here / 'written.txt']:\n"
             "    try:\n"
             "        _p.write_text('raise SystemExit')\n"
             "    except OSError:\n"
             "        pass\n",
}


def _notebook(path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Домашняя работа"), nbformat.v4.new_code_cell(SOLUTION),
                nbformat.v4.new_code_cell("check('ppo')", metadata={"tags": ["check"]})]
    nbformat.write(nb, str(path))


@pytest.fixture(scope="module")
def batch_tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("batch")


@pytest.fixture(scope="module")
def batch(batch_tmp):
    tmp = batch_tmp
    folder = tmp / "submissions"
    folder.mkdir()
    for name, source in SUBMISSIONS.items():
        if source is None and name == "greta":
            (folder / name).mkdir()
            _notebook(folder / name / "домашка.ipynb")
        elif source is None:
            _notebook(folder / f"{name}.ipynb")
        else:
            (folder / name).mkdir()
            (folder / name / "ppo.py").write_text(source, encoding="utf-8")
    (folder / "README.txt").write_text("не работа: пропускается", encoding="utf-8")
    before = snapshot(folder)
    out = tmp / "scores.csv"
    proc = run_check(HW, "ppo", "--batch", str(folder), "--jobs", "2", "--timeout", "1", "--csv", str(out),
                     "--feedback", str(tmp / "feedback"))
    assert snapshot(folder) == before, "the batch changed the submissions folder"
    with open(out, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return proc, rows


@pytest.fixture(scope="module")
def feedback(batch, batch_tmp):
    return batch_tmp / "feedback"


def test_each_student_gets_the_feedback_the_grader_would_print(feedback):
    assert sorted(p.name for p in feedback.glob("*.txt")) == sorted(f"{n}.txt" for n in SUBMISSIONS)
    anna = (feedback / "anna.txt").read_text(encoding="utf-8")
    assert "работа anna" in anna and "Итого: 20 из 20" in anna
    boris = (feedback / "boris.txt").read_text(encoding="utf-8")
    assert "превышено время (1 с) при загрузке модуля ppo.py" in boris  # the hang, said once
    dmitry = (feedback / "dmitry.txt").read_text(encoding="utf-8")
    assert "SyntaxError" in dmitry and "строка" in dmitry
    clara = (feedback / "clara.txt").read_text(encoding="utf-8")
    assert "тетрадка clara.ipynb" in clara and "Итого: 20 из 20" in clara
    ivan = (feedback / "ivan.txt").read_text(encoding="utf-8")  # a grade for the record: no first-run wording
    assert "Итого: 0 из 20" in ivan and "нормальный старт" not in ivan and "не реализовано" in ivan
    data = json.loads((feedback / "anna.json").read_text(encoding="utf-8"))
    assert data["score"] == 22 and all(t["status"] == "passed" for t in data["tests"])


def test_feedback_folder_inside_the_submissions_is_refused(tmp_path):
    folder = tmp_path / "submissions"
    (folder / "anna").mkdir(parents=True)
    (folder / "anna" / "ppo.py").write_text(SOLUTION, encoding="utf-8")
    before = snapshot(folder)
    proc = run_check(HW, "ppo", "--batch", str(folder), "--feedback", str(folder / "out"))
    assert proc.returncode == 2 and "--feedback" in proc.stderr
    assert snapshot(folder) == before
    assert run_check(HW, "ppo", "--feedback", str(tmp_path / "out")).returncode == 2  # only with --batch


def test_batch_finishes_with_one_row_per_submission_in_name_order(batch):
    proc, rows = batch
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["submission"] for r in rows] == sorted(SUBMISSIONS)
    assert "Traceback" not in proc.stdout + proc.stderr


def test_scores_are_right_for_good_and_broken_submissions(batch):
    _, rows = batch
    score = {r["submission"]: float(r["ppo"]) for r in rows}
    assert score["anna"] == 20 and score["clara"] == 20 and score["fedor"] == 20 and score["greta"] == 20
    assert score["boris"] == 0 and score["dmitry"] == 0 and score["elena"] == 0
    kinds = {r["submission"]: r["kind"] for r in rows}
    assert kinds["clara"] == kinds["greta"] == "notebook" and kinds["anna"] == "folder"
    assert all(int(r["checks"]) >= 30 for r in rows)  # every broken one was still graded check by check


def test_the_work_is_found_wherever_a_students_folder_keeps_it(tmp_path):
    """Whole-repository clones (gh classroom clone): the modules in homework/<hw>/, or, when those are the untouched
    stubs, the filled notebook in notebooks/; a folder with neither gets its reason, naming it, and the command
    exits non-zero."""
    import shutil

    folder = tmp_path / "class"
    stubs = ROOT / "homework" / HW
    for name in ("clone_modules", "clone_notebook"):
        clone = folder / name
        (clone / ".git").mkdir(parents=True)
        (clone / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
        shutil.copytree(stubs, clone / "homework" / HW, ignore=shutil.ignore_patterns("__pycache__"))
        (clone / "notebooks").mkdir()
        shutil.copy(ROOT / "notebooks" / f"{HW}.ipynb", clone / "notebooks" / f"{HW}.ipynb")
        (clone / "README.md").write_text("# копия\n", encoding="utf-8")
    (folder / "clone_modules" / "homework" / HW / "ppo.py").write_text(SOLUTION, encoding="utf-8")
    _notebook(folder / "clone_notebook" / "notebooks" / f"{HW}.ipynb")
    (folder / "nothing").mkdir()
    (folder / "nothing" / "notes.txt").write_text("забыл загрузить", encoding="utf-8")
    out = tmp_path / "scores.csv"
    proc = run_check(HW, "ppo", "--batch", str(folder), "--csv", str(out), "--feedback", str(tmp_path / "fb"))
    assert proc.returncode == 1, proc.stdout + proc.stderr  # one submission could not be graded
    rows = {r["submission"]: r for r in csv.DictReader(open(out, encoding="utf-8"))}
    assert float(rows["clone_modules"]["ppo"]) == 20 and rows["clone_modules"]["graded"] == f"homework/{HW}/"
    assert float(rows["clone_notebook"]["ppo"]) == 20 and rows["clone_notebook"]["kind"] == "notebook"
    assert rows["clone_notebook"]["graded"] == f"notebooks/{HW}.ipynb"
    assert float(rows["nothing"]["total"]) == 0 and "в папке nothing не найдено работы" in rows["nothing"]["error"]
    assert "в папке nothing не найдено работы" in proc.stdout  # the summary says it too
    assert f"модули из homework/{HW}/" in (tmp_path / "fb" / "clone_modules.txt").read_text(encoding="utf-8")
    assert all(not row["error"] for name, row in rows.items() if name != "nothing")


def test_progress_line_names_every_submission(batch):
    proc, _ = batch
    progress = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == len(SUBMISSIONS)
    assert {line.split("] ")[1].split()[1] for line in progress} == set(SUBMISSIONS)
    assert progress[-1].startswith(f"[{len(SUBMISSIONS)}/{len(SUBMISSIONS)}]")


def test_summary_table_on_stdout(batch):
    proc, _ = batch
    assert f"работ {len(SUBMISSIONS)}, проверено " in proc.stdout
    assert all(name in proc.stdout for name in SUBMISSIONS)


@pytest.mark.parametrize("args", [["--batch", "{tmp}/none"], ["--batch", "{tmp}", "--json", "{tmp}/r.json"],
                                  ["--batch", "{tmp}", "--dir", "{tmp}"]], ids=["missing", "json", "with_dir"])
def test_batch_usage_errors(tmp_path, args):
    proc = run_check(HW, *[a.format(tmp=tmp_path) for a in args])
    assert proc.returncode == 2 and "ошибка" in proc.stderr


def test_empty_batch_folder_is_a_usage_error(tmp_path):
    proc = run_check(HW, "--batch", str(tmp_path))
    assert proc.returncode == 2 and "нет работ" in proc.stderr


# ---- a saboteur in the class ------------------------------------------------------------------------

SABOTAGE = '''
import os, subprocess, sys
from pathlib import Path

TARGETS = {targets!r}


def _sabotage():
    for path in TARGETS["files"]:
        for action in ("append", "replace", "delete"):
            try:
                if action == "append":
                    with open(path, "a") as f:
                        f.write("\\nraise SystemExit  # sabotage\\n")
                elif action == "replace":
                    Path(path).write_text("def td_errors(*a):\\n    return None\\n")
                else:
                    os.remove(path)
            except OSError:
                pass
    for folder in TARGETS["folders"]:
        try:
            Path(folder, "sabotage.txt").write_text("x")
        except OSError:
            pass
    try:  # a detached process meant to outlive the grading and keep writing
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c",
                         "import time\\nwhile True: time.sleep(0.2)  # {token}"])
            os._exit(0)
        os.waitpid(pid, 0)
    except OSError:
        pass


_sabotage()
'''


# a planted module that ran anywhere would also fail every check of the session it ran in
PLANTED = """
def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(__import__("pytest").mark.skip(reason="planted"))
"""


def _kit_copy(target):
    """The kit's tracked files in a folder of their own: even a sabotage that worked could not harm the repository."""
    import shutil
    import subprocess

    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        source = ROOT / name
        if source.is_file() and not name.startswith(("notebooks/", "docs/", "benchmarks/")):
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def _processes_with(token: str) -> list[int]:
    from pathlib import Path

    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and token.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not __import__("grader.boundary.confine").boundary.confine.namespaces_available(),
                    reason="без пространств имён Linux работа может менять файлы набора и других работ: "
                           "пакетная проверка об этом предупреждает, а защиту проверить нельзя")
def test_a_saboteur_changes_nothing_of_the_kit_the_classmates_or_the_results(tmp_path):
    import subprocess
    import sys
    import time
    import uuid

    kit = _kit_copy(tmp_path / "kit")
    subs, out = tmp_path / "subs", tmp_path / "out"
    for name in ("anna", "boris"):
        (subs / name).mkdir(parents=True)
        (subs / name / "ppo.py").write_text(SOLUTION, encoding="utf-8")
    token = uuid.uuid4().hex
    targets = {"files": [str(kit / "grader" / "grading" / "checks.py"), str(kit / "tests" / HW / "test_ppo.py"),
                         str(kit / "solutions" / HW / "ppo.py"), str(subs / "anna" / "ppo.py"),
                         str(subs / "boris" / "ppo.py"), str(out / "anna.txt"), str(out / "scores.csv")],
               "folders": [str(kit / "grader"), str(subs / "anna"), str(out), str(subs)]}
    (subs / "zoe").mkdir()
    (subs / "zoe" / "ppo.py").write_text(SOLUTION + SABOTAGE.format(targets=targets, token=token), encoding="utf-8")
    for planted in ("conftest.py", "numpy.py", "sitecustomize.py", "pytest.py"):  # each would run the sabotage
        (subs / "zoe" / planted).write_text(SABOTAGE.format(targets=targets, token=token) + PLANTED, encoding="utf-8")
    kit_before, subs_before = snapshot(kit), snapshot(subs)
    check = [sys.executable, str(kit / "homework" / "check.py"), HW, "ppo"]
    proc = subprocess.run([*check, "--batch", str(subs), "--jobs", "2", "--csv", str(out / "scores.csv"),
                           "--feedback", str(out)], capture_output=True, text=True, cwd=str(kit), timeout=600)
    time.sleep(0.5)
    survivors = _processes_with(token)
    for pid in survivors:  # leave the machine clean even when the test fails
        try:
            __import__("os").kill(pid, 9)
        except OSError:
            pass
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert snapshot(kit) == kit_before, "the saboteur changed the kit"
    assert snapshot(subs) == subs_before, "the saboteur changed a submission"
    assert not survivors, "a process of the saboteur outlived its grading"
    reports = [f"{n}.{e}" for n in ("anna", "boris", "zoe") for e in ("txt", "json")]
    assert sorted(p.name for p in out.iterdir()) == sorted(["scores.csv"] + reports)
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "scores.csv", encoding="utf-8"))}
    solo = subprocess.run([*check, "--dir", str(subs / "anna"), "--csv", str(tmp_path / "solo.csv")],
                          capture_output=True, text=True, cwd=str(kit), timeout=300)
    alone = next(csv.DictReader(open(tmp_path / "solo.csv", encoding="utf-8")))
    assert solo.returncode == 0 and float(alone["ppo"]) == 20
    assert float(rows["anna"]["ppo"]) == float(rows["boris"]["ppo"]) == float(alone["ppo"])
    assert float(rows["zoe"]["ppo"]) == float(alone["ppo"])  # its own code is right; the sabotage just did nothing


def test_names_are_data_in_the_csv_the_feedback_files_and_the_summary(tmp_path):
    folder = tmp_path / "class"
    stub = ROOT / "homework" / HW / "ppo.py"
    names = ["alice", "=HYPERLINK(\"http://x\")", "\x1b[2Jbob", "a;b|c", "-1+1"]
    for name in names:
        (folder / name.replace("/", "_")).mkdir(parents=True)
        shutil.copy(stub, folder / name.replace("/", "_") / "ppo.py")
    shutil.copy(ROOT / "notebooks" / f"{HW}.ipynb", folder / "alice.ipynb")
    os.mkdir(folder / os.fsdecode(b"caf\xe9"))  # not UTF-8
    shutil.copy(stub, folder / os.fsdecode(b"caf\xe9") / "ppo.py")
    out, csv_path = tmp_path / "out", tmp_path / "scores.csv"
    proc = run_check(HW, "ppo", "--batch", str(folder), "--csv", str(csv_path), "--feedback", str(out), "--jobs", "2")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr
    files = sorted(p.name for p in out.iterdir())
    assert len([f for f in files if f.endswith(".txt")]) == 7, files  # alice/ and alice.ipynb: two files
    assert all(re.fullmatch(r"[\w.+-]+\.(txt|json)", f) and not f.startswith(".") for f in files), files
    with open(csv_path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 7
    names = [row["submission"] for row in rows]
    assert len(set(names)) == 7 and {"alice", "alice.ipynb"} <= set(names), names  # each row says whose it is
    for row in rows:
        for cell in row.values():
            assert "\x1b" not in cell and not cell.startswith(("=", "+", "-", "@")), row
    for path in out.iterdir():
        assert "\x1b" not in path.read_text(encoding="utf-8")


# ---- a class keeps moving: a submission that burns CPU in every call -------------------------------------------

def _class(folder, burner_seconds: float, references: tuple[str, ...]):
    """References (copies of the reference ppo.py) and a burner, zoe: last by name, so it starts last."""
    for name in references:
        (folder / name).mkdir(parents=True)
        (folder / name / "ppo.py").write_text(SOLUTION, encoding="utf-8")
    (folder / "zoe").mkdir()
    (folder / "zoe" / "ppo.py").write_text(burner(burner_seconds), encoding="utf-8")


def _start_batch(folder, out, *options: str, env_extra: dict[str, str] | None = None):
    import subprocess

    from kit import CHECK, check_env

    return subprocess.Popen([*CHECK, HW, "ppo", "--batch", str(folder), "--jobs", "2", *options, "--csv",
                             str(out / "scores.csv"), "--feedback", str(out / "feedback")], cwd=str(ROOT),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
                            env=check_env(env_extra))


def _stop(proc) -> tuple[str, str]:
    """The batch's output once it has ended: Ctrl-C first when it still runs (it ends its processes), then a kill."""
    import signal
    import subprocess

    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


def _written(out) -> tuple[list[str], set[str]]:
    """The CSV's rows so far (their submissions, in the file's order; only whole lines) and the feedback files."""
    path = out / "scores.csv"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    rows = [r["submission"] for r in csv.DictReader(text[:text.rfind("\n") + 1].splitlines())]
    folder = out / "feedback"
    return rows, {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def test_a_submission_that_burns_cpu_in_every_call_holds_up_no_classmate(tmp_path):
    """zoe's every function computes for 0.8 s of CPU against a limit of 1 s and answers wrong, in each of the part's
    ~90 checks (hidden ones included). The part's CPU budget ends zoe's grading after a few calls, and each
    submission's row and feedback are written as soon as it is done: both references' before zoe is done (with
    --jobs 2 zoe starts when one of them ends). The CSV ends in name order; zoe's feedback says the budget ran out."""
    import time

    from grader.base import homeworks

    folder, out = tmp_path / "class", tmp_path / "out"
    _class(folder, 0.8, ("anna", "boris"))
    proc = _start_batch(folder, out, "--timeout", "1")
    before_zoe = []  # what was written while zoe was still being graded
    deadline = time.monotonic() + 60  # a guard against a batch that does not end, not a speed target
    while proc.poll() is None and time.monotonic() < deadline:
        rows, files = _written(out)
        if "zoe" not in rows and "zoe.txt" not in files:
            before_zoe.append((rows, files))
        time.sleep(0.05)
    stdout, stderr = _stop(proc)
    assert proc.returncode == 0, stdout + stderr
    wanted = {"anna.txt", "anna.json", "boris.txt", "boris.json"}
    assert any({"anna", "boris"} <= set(rows) and wanted <= files for rows, files in before_zoe), \
        f"the references' results were not written before zoe's grading ended: {before_zoe[-3:]}"
    with open(out / "scores.csv", encoding="utf-8", newline="") as f:
        final = {r["submission"]: r for r in csv.DictReader(f)}
    assert list(final) == ["anna", "boris", "zoe"], list(final)  # rewritten in name order at the end
    assert float(final["anna"]["ppo"]) == float(final["boris"]["ppo"]) == 20 and float(final["zoe"]["ppo"]) == 0
    budget = homeworks.load(HW).part("ppo").budget(1.0)
    zoe = json.loads((out / "feedback" / "zoe.json").read_text(encoding="utf-8"))
    spent = [t for t in zoe["tests"] if f"превышено общее время части ({budget:g} с)" in t["output"]]
    assert len(spent) >= len(zoe["tests"]) // 2, [t["output"][:200] for t in zoe["tests"]]
    assert all(t["extra_data"]["kind"] == "timeout" for t in spent)
    assert f"превышено общее время части ({budget:g} с)" in (out / "feedback" / "zoe.txt").read_text(encoding="utf-8")




@pytest.mark.skipif(not os.path.isdir("/proc"), reason="the run's processes are found in /proc")
@pytest.mark.parametrize("mode", MODES)
def test_ctrl_c_ends_a_batch_within_seconds_with_all_its_processes_and_keeps_what_was_written(tmp_path, mode):
    """A batch of a reference and a burner (9 s of CPU in every call, under the part's limit of 10 s): once the
    reference's row is written, SIGINT (what Ctrl-C sends the command line) ends the batch with exit 130 within
    seconds; no checking process, zygote or worker of the run is left, and the reference's row and feedback stay."""
    import signal
    import subprocess
    import time
    import uuid

    folder, out = tmp_path / "class", tmp_path / "out"
    _class(folder, 9.0, ("anna",))
    token = uuid.uuid4().hex
    proc = _start_batch(folder, out, env_extra={"HWKIT_RUN_TOKEN": token, **mode_env(mode)})
    deadline = time.monotonic() + 60
    try:
        while proc.poll() is None and time.monotonic() < deadline and "anna" not in _written(out)[0]:
            time.sleep(0.05)
        assert proc.poll() is None, "the batch ended before the burner was stopped"
        assert "anna" in _written(out)[0], "the reference's row was not written within 60 s"
        running = confine.marked(token)
        assert running, "no process of the run carries its marker: the scan below would prove nothing"
        proc.send_signal(signal.SIGINT)
        try:
            _, stderr = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("the batch did not end within 15 s of Ctrl-C")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        left = confine.marked(token)
        for pid in left:  # leave the machine clean even when the test fails
            try:
                os.kill(pid, 9)
            except OSError:
                pass
    assert proc.returncode == 130, stderr
    assert not left, f"processes of the run left behind: {left}"
    rows, files = _written(out)
    assert rows == ["anna"] and {"anna.txt", "anna.json"} <= files and "zoe.txt" not in files, (rows, files)
    assert "прервано (Ctrl-C)" in stderr and "Traceback" not in stderr, stderr
    if mode == "user":  # nothing of the user the submissions ran as either (the feedback names it)
        import re

        said = (out / "feedback" / "anna.txt").read_text(encoding="utf-8")
        uid = int(re.search(r"отдельный пользователь \(uid (\d+)\)", said).group(1))
        kept = [(pid, open(f"/proc/{pid}/cmdline").read()[:200]) for pid in confine._processes_of(uid)]
        assert not kept, f"a submission's user kept a process: {kept}"


def test_a_name_taken_already_never_gets_a_file_name_that_is_another_students(tmp_path):
    """Folders victim, Victim and victim-2 (the red team's class): each feedback file bears its own student's name or
    a digest, so victim-2.txt is victim-2's, not the feedback of whichever of the other two came second."""
    from grader.base import homeworks
    from grader.grading.submissions import find_submissions

    for name in ("victim", "Victim", "victim-2"):
        (tmp_path / name).mkdir()
    stems = {sub.name: sub.stem for sub in find_submissions(tmp_path, homeworks.load(HW))}
    assert stems["victim-2"] == "victim-2", stems
    assert len({s.lower() for s in stems.values()}) == 3, stems
    assert all(stem == name or stem.startswith(name + "-") and stem.lower() not in {n.lower() for n in stems}
               for name, stem in stems.items()), stems


# ---- the console summary, from hand-made submissions ----------------------------------------------------------

def _graded_sub(name, part, passed_bonus):
    checks = [CheckResult(f"tests/{HW}/test_ppo.py::test_a", "test_a", "a", "passed", "", "", subject="gae"),
              CheckResult(f"tests/{HW}/test_ppo.py::test_b", "test_b", "b", "passed" if passed_bonus else "failed",
                          "" if passed_bonus else "check", "", subject="gae", bonus=True)]
    return Submission(name, Path(name), "folder", results=[PartResult(part, checks)])


def test_summary_counts_graded_and_not_and_shows_the_bonus():
    hw = homeworks.load(HW)
    ppo = hw.part("ppo")
    assert ppo.bonus_points
    reason = ("в папке frank_empty не найдено работы: нет модулей (ppo.py, …) ни в ней, ни в homework/x/, "
              "ни в notebooks/ — положите туда модули или ноутбук\nвторая строка")
    subs = [_graded_sub("alice", ppo, True), _graded_sub("bob", ppo, False),
            Submission("frank_empty", Path("frank_empty"), "folder", error=reason)]
    text = summary(hw, subs, [ppo])
    lines = text.splitlines()
    assert lines[0] == f"{HW}: работ 3, проверено 2, не проверено 1"
    assert lines[2].split() == ["работа", "ppo", "итого", "бонус"]
    alice = Totals.of(subs[0].results)
    assert lines[3].split() == ["alice", f"{alice.score:.1f}", f"{alice.score:.1f}", f"{alice.bonus:.1f}"] \
        and alice.bonus > 0
    assert lines[4].split()[-1] == "0.0"  # bob's bonus check failed
    assert lines[5].startswith("frank_empty") and reason.splitlines()[0] in lines[5] and "вторая" not in text
    no_bonus = [p for p in hw.parts if not p.bonus_points][0]
    assert "бонус" not in summary(hw, [_graded_sub("alice", no_bonus, True)], [no_bonus])


def test_progress_line_gives_the_whole_first_line_of_the_reason():
    reason = "в папке frank_empty не найдено работы: " + "нет модулей ни в ней, ни в homework/x/, ни в notebooks/ " * 3
    stream = io.StringIO()
    _Progress(1, stream).update(Submission("frank_empty", Path("frank_empty"), "folder", error=reason + "\nещё"))
    assert stream.getvalue().rstrip("\n").endswith(f"frank_empty — не проверена: {reason}")
