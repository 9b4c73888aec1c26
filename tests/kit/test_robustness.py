"""The grader survives any student code: each case grades a real misbehaving `ppo.py` through the command line.

Every case also proves that the grader wrote nothing into the student's folder (no __pycache__, no
.pytest_cache, no file the student's code created with a relative path): the folder is byte-identical
after grading. The cases use only the part `ppo` and short selections of its checks, to stay fast.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from grader.base import homeworks
from grader.base.homeworks import ROOT
from grader.boundary import confine, zygote
from kit import HW, MODES, mode_env, run_check

pytestmark = pytest.mark.slow  # grades whole homeworks: left out of the everyday loop (-m "not slow")

SOLUTION = ROOT / "solutions" / HW / "ppo.py"
NORMALIZE_CHECKS = {"test_normalize_pinned", "test_normalize_eps", "test_normalize_random[3]",  # [3], [17]: their
                    "test_normalize_large_offset[17]"}  # public seeds


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``folder`` with its bytes (None for a folder)."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def submission(tmp_path: Path, appended: str = "", *, source: str | None = None) -> Path:
    """A student's folder with ppo.py: the reference with ``appended`` code after it (later definitions win)."""
    folder = tmp_path / "student"
    folder.mkdir()
    text = source if source is not None else SOLUTION.read_text(encoding="utf-8") + "\n\n" + textwrap.dedent(appended)
    (folder / "ppo.py").write_text(text, encoding="utf-8")
    return folder


def grade(tmp_path: Path, folder: Path, *selection: str, timeout: float | None = None,
          env: dict[str, str] | None = None):
    """Grade ``folder`` (part ppo, or the selected checks); return (process, results.json, checks by name)."""
    before = snapshot(folder)
    out = tmp_path / "results.json"
    args = [HW, *(selection or ["ppo"]), "--dir", str(folder), "--json", str(out)]
    if timeout is not None:
        args += ["--timeout", str(timeout)]
    proc = run_check(*args, env_extra=env)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert snapshot(folder) == before, "the grader changed the student's folder"
    data = json.loads(out.read_text(encoding="utf-8"))
    checks = {t["extra_data"]["check"]: t for t in data["tests"] if "extra_data" in t}
    return proc, data, checks


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The reference graded as a student folder: what an unbroken part scores."""
    tmp = tmp_path_factory.mktemp("reference")
    return grade(tmp, submission(tmp))


def failed(checks: dict) -> set[str]:
    return {name for name, t in checks.items() if t["status"] != "passed"}


# ---- a hanging function ---------------------------------------------------------------------------

# workers forked by the zygote (Linux), or started as processes of their own (elsewhere, HWKIT_ZYGOTE=off)
@pytest.mark.parametrize("workers", ["forked", "spawned"])
def test_infinite_loop_fails_that_check_with_a_time_limit_and_the_rest_is_graded(tmp_path, workers):
    folder = submission(tmp_path, """
        def gae(rewards, values, last_value, gamma, lam):
            while True:
                pass
    """)
    selection = ["ppo::test_td_errors_courier", "ppo::test_gae_courier[lam0.5]", "ppo::test_quiz_question_2",
                 "ppo::test_clip_five_cases", "ppo::test_normalize_pinned"]
    proc, data, checks = grade(tmp_path, folder, *selection, timeout=1,
                               env={"HWKIT_ZYGOTE": "off"} if workers == "spawned" else None)
    assert failed(checks) == {"test_gae_courier[lam0.5]", "test_quiz_question_2"}
    first, later = checks["test_gae_courier[lam0.5]"], checks["test_quiz_question_2"]
    assert first["extra_data"]["kind"] == "timeout"
    assert "превышено время (1 с)" in first["output"]
    # where the loop was: the function, the file and the line of the student's code
    assert "функция gae (ppo.py, строка" in first["output"]
    # a later check calling the same function fails at once, saying where it hung
    assert later["extra_data"]["kind"] == "hung"
    assert "функция gae не запускалась" in later["output"] and "Робот-курьер" in later["output"]
    # the other checks ran in a fresh process and passed: 1 + 5 clipping cases + 1
    assert sum(t["status"] == "passed" for t in checks.values()) == 7
    assert "превышено время (1 с)" in proc.stdout


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seconds,passes", [(1.5, True), (60.0, False)], ids=["waits", "waits-too-long"])
def test_the_time_limit_counts_the_workers_cpu_so_a_busy_machine_fails_no_check(tmp_path, seconds, passes, mode):
    """A check's limit is the CPU time the student's code takes (a machine busy with a classmate's submission
    slows it, and that time is not on the CPU); a call that only waits ends past the wall-clock backstop. In each
    mode: the workers are the zygote's, whose CPU time it reads (a worker started on its own is held to wall-clock
    time)."""
    env = mode_env(mode)
    folder = submission(tmp_path, f"""
        import time as _time

        _td_errors = td_errors


        def td_errors(rewards, values, last_value, gamma):
            _time.sleep({seconds})
            return _td_errors(rewards, values, last_value, gamma)
    """)
    started = time.monotonic()
    _, data, checks = grade(tmp_path, folder, "ppo::test_td_errors_courier", timeout=1, env=env)
    took = time.monotonic() - started
    assert "test_td_errors_courier" in checks, data
    check = checks["test_td_errors_courier"]
    if passes:
        assert check["status"] == "passed", check["output"]
    else:
        assert check["extra_data"]["kind"] == "timeout" and "превышено время (1 с)" in check["output"], check
        assert took < 30, f"the wall-clock backstop ({confine.WALL_FACTOR:g} × 1 s) did not end the call: {took:.0f} s"


@pytest.mark.skipif(not zygote.available(), reason="the worker's CPU time is read from the kernel through the zygote")
def test_a_worker_that_forges_its_clocks_still_runs_out_of_cpu_time(tmp_path):
    """The limit is enforced from outside the worker: code that makes time.process_time (and the watchdog's other
    clocks) read 0, then computes for 3 s of CPU against a limit of 1 s, fails that check with a time limit."""
    folder = submission(tmp_path, """
        import time as _time

        _time.process_time = lambda: 0.0
        _time.monotonic = lambda: 0.0
        _td_errors = td_errors


        def td_errors(rewards, values, last_value, gamma):
            end = _time.perf_counter() + 3.0
            while _time.perf_counter() < end:
                pass
            return _td_errors(rewards, values, last_value, gamma)
    """)
    _, _, checks = grade(tmp_path, folder, "ppo::test_td_errors_courier", timeout=1)
    check = checks["test_td_errors_courier"]
    assert check["extra_data"]["kind"] == "timeout", check["output"]


@pytest.mark.skipif(not zygote.available(), reason="the worker's CPU time is read from the kernel through the zygote")
@pytest.mark.parametrize("where", ["between-calls", "at-import"])
def test_cpu_time_used_off_the_call_is_charged_to_the_check(tmp_path, where):
    """Work done by a thread while the checking side is busy between calls, or at the module's import, is the
    check's: 2.5 s of CPU in a thread started at import (the call only waits for it; the worker's clock forged),
    or 0.8 s at import and 0.6 s in the call, against a limit of 1 s, fail the check with a time limit."""
    work = {"between-calls": """
        import threading as _threading
        import time as _time

        _done = _threading.Event()
        _time.process_time = lambda: 0.0  # the worker's own watchdog sees nothing


        def _precompute():
            end = _time.thread_time() + 2.5
            while _time.thread_time() < end:
                pass
            _done.set()


        _threading.Thread(target=_precompute, daemon=True).start()
        _td_errors = td_errors


        def td_errors(rewards, values, last_value, gamma):
            _done.wait()
            return _td_errors(rewards, values, last_value, gamma)
    """, "at-import": """
        import time as _time


        def _spin(seconds):
            end = _time.process_time() + seconds
            while _time.process_time() < end:
                pass


        _spin(0.8)
        _td_errors = td_errors


        def td_errors(rewards, values, last_value, gamma):
            _spin(0.6)
            return _td_errors(rewards, values, last_value, gamma)
    """}[where]
    _, _, checks = grade(tmp_path, submission(tmp_path, work), "ppo::test_td_errors_courier", timeout=1)
    check = checks["test_td_errors_courier"]
    assert check["extra_data"]["kind"] == "timeout", check["output"]


def test_waiting_has_one_budget_per_part_not_one_per_check(tmp_path):
    """A function that waits just under the wall-clock backstop in every check does not multiply the run's time:
    the part's calls share one budget of time off the CPU (4 × the limit); past it, the limit is wall-clock time."""
    folder = submission(tmp_path, """
        import time as _time

        _td_errors = td_errors


        def td_errors(rewards, values, last_value, gamma):
            _time.sleep(2.5)  # under the backstop of one check (4 × 1 s)
            return _td_errors(rewards, values, last_value, gamma)
    """)
    names = ["test_td_errors_courier", "test_td_errors_last_value", "test_n_step_identity"]
    started = time.monotonic()
    _, _, checks = grade(tmp_path, folder, *[f"ppo::{n}" for n in names], timeout=1)
    took = time.monotonic() - started
    kinds = [checks[n]["extra_data"]["kind"] if checks[n]["status"] != "passed" else "passed" for n in names]
    assert "timeout" in kinds, kinds  # the budget ran out although no call reached the backstop
    assert took < 20, f"{took:.0f} s"


def test_a_function_that_hangs_costs_the_time_limit_once_per_function_not_per_check(tmp_path, reference):
    folder = submission(tmp_path, """
        def td_errors(rewards, values, last_value, gamma):
            while True:
                pass
    """)
    started = time.perf_counter()
    proc, data, checks = grade(tmp_path, folder, timeout=2)
    seconds = time.perf_counter() - started
    calls = {n for n, t in checks.items() if t["status"] != "passed"}
    assert len(calls) >= 10  # td_errors is behind td_errors, gae and the random GAE checks
    timeouts = [checks[n] for n in calls if checks[n]["extra_data"]["kind"] == "timeout"]
    # td_errors hangs once; gae, which calls it, hangs once too and is told where: in td_errors, called from gae
    assert 1 <= len(timeouts) <= 3, [t["output"] for t in timeouts]
    assert any("функция td_errors не вернула ответ" in t["output"] for t in timeouts)
    assert all("функция td_errors" in t["output"] for t in timeouts)
    assert all(checks[n]["extra_data"]["kind"] in ("timeout", "hung") for n in calls)
    assert seconds < 3 * (2 + 2) + 10, f"{seconds:.1f} s: the limit was waited out more than once per function"
    # checks that never call td_errors are graded as on the reference
    assert {n: t["score"] for n, t in checks.items() if n not in calls} == \
        {n: t["score"] for n, t in reference[2].items() if n not in calls}


def test_a_code_file_name_that_is_not_utf8_and_holds_a_newline_crashes_no_checking_process(tmp_path):
    """A hang report names the student's code by its file name, which the submission chooses: here bytes that are
    not UTF-8 (a lone surrogate, once decoded) and a newline, in a module imported by its own path and in code
    compiled under a notebook cell's name. Both functions loop past the limit. The checking process survives (it
    died encoding such a name), each function fails with a time message, and every other check of the part has a
    verdict of its own."""
    folder = submission(tmp_path, """
        import importlib.util as _util
        import os as _os

        _here = _os.path.dirname(_os.path.abspath(__file__))
        for _name in sorted(_os.listdir(_here)):
            if _name.startswith("gae"):  # its code named like a notebook cell's: "<ячейка gae\\udcff\\nx.py>"
                with open(_os.path.join(_here, _name), "rb") as _f:
                    exec(compile(_f.read(), "<ячейка " + _name + ">", "exec"))
            elif _name.startswith("norm"):  # a module imported by its own path
                _spec = _util.spec_from_file_location("norm", _os.path.join(_here, _name))
                _module = _util.module_from_spec(_spec)
                _spec.loader.exec_module(_module)
                normalize_advantages = _module.normalize_advantages
    """)
    for name, function in [(b"gae\xff\nx.py", b"gae(rewards, values, last_value, gamma, lam)"),
                           (b"norm\xfe\ny.py", b"normalize_advantages(adv, eps=1e-8)")]:
        with open(os.path.join(os.fsencode(folder), name), "wb") as f:
            f.write(b"def " + function + b":\n    while True:\n        pass\n")
    proc, data, checks = grade(tmp_path, folder, timeout=1)
    hung = {"gae", "normalize_advantages"}
    assert not [n for n, t in checks.items() if "не дала результата" in t["output"]], proc.stdout
    for function in hung:  # one call ran out of time; the function's later checks failed at once, saying so
        mine = [t for t in checks.values() if t["extra_data"]["subject"] == function]
        assert [t["extra_data"]["kind"] for t in mine].count("timeout") == 1, [t["output"] for t in mine]
        assert all(t["extra_data"]["kind"] in ("timeout", "hung") for t in mine), [t["output"] for t in mine]
        timeout = next(t for t in mine if t["extra_data"]["kind"] == "timeout")
        assert f"превышено время (1 с): функция {function} не вернула ответ" in timeout["output"]
    # where the module imported by its path looped: its staged name, escaped (the byte that is not UTF-8 as U+FFFD)
    assert "функция normalize_advantages (norm\ufffd\\x0ay.py, строка 2)" in proc.stdout, proc.stdout
    others = {n: t["status"] for n, t in checks.items() if t["extra_data"]["subject"] not in hung}
    assert len(others) >= 20 and set(others.values()) == {"passed"}, others


def test_module_that_hangs_on_import_is_reported_once_not_per_check(tmp_path, reference):
    folder = submission(tmp_path, """
        while True:
            pass
    """)
    proc, data, checks = grade(tmp_path, folder, timeout=1)
    assert data["score"] == 0 and len(checks) >= 30 and not any(t["status"] == "passed" for t in checks.values())
    assert all("превышено время (1 с) при загрузке модуля ppo.py" in t["output"] for t in checks.values())
    assert proc.stdout.count("при загрузке модуля ppo.py") == 1  # grouped: one line, not a wall of 40
    # every check keeps its title, weight and bonus flag: the maximum scores are those of the reference
    assert {n: (t["name"], t["max_score"]) for n, t in checks.items()} == \
        {n: (t["name"], t["max_score"]) for n, t in reference[2].items()}


# ---- a module that does not load: file and line --------------------------------------------------

BROKEN_MODULES = {  # appended code, the message expected, the appended line that is to blame
    "syntax_error": ("def broken(:\n    pass\n", "SyntaxError в ppo.py, строка {line}", 0),
    "import_error": ("import numpy_that_does_not_exist\n", "ModuleNotFoundError: No module named "
                     "'numpy_that_does_not_exist' (ppo.py, строка {line}", 0),
    "exception_at_top_level": ("SCALE = 1 / 0\n", "ZeroDivisionError: division by zero (ppo.py, строка {line}", 0),
    "sys_exit_at_top_level": ("import sys\nsys.exit(3)\n", "SystemExit: 3 (ppo.py, строка {line}", 1),
}


@pytest.mark.parametrize("case", list(BROKEN_MODULES))
def test_module_that_does_not_load_is_reported_with_file_and_line(tmp_path, case):
    code, expected, index = BROKEN_MODULES[case]
    prefix = SOLUTION.read_text(encoding="utf-8") + "\n\n"
    source = prefix + code
    line = prefix.count("\n") + 1 + index
    folder = submission(tmp_path, source=source)
    proc, data, checks = grade(tmp_path, folder)
    assert proc.returncode == 1 and data["score"] == 0
    assert {t["extra_data"]["kind"] for t in checks.values()} == {"load"}
    message = expected.format(line=line)
    assert all(message in t["output"] for t in checks.values()), next(iter(checks.values()))["output"]
    assert proc.stdout.count(message) == 1, proc.stdout


def test_os_exit_at_top_level_is_reported_for_the_module(tmp_path):
    folder = submission(tmp_path, "import os\nos._exit(0)\n")
    proc, data, checks = grade(tmp_path, folder)
    assert data["score"] == 0 and checks
    assert all("при загрузке модуля ppo.py" in t["output"] and "os._exit" in t["output"] for t in checks.values())
    assert proc.stdout.count("при загрузке модуля ppo.py") == 1


# ---- exits, crashes and output inside one function: only its checks fail ---------------------------

@pytest.mark.parametrize("body,words,workers", [
    ("import sys; sys.exit(0)", "sys.exit(0)", "forked"),
    ("import os; os._exit(0)", "os._exit", "forked"),
    ("import os; os._exit(0)", "os._exit", "spawned"),
    ("input('нажмите Enter')", "input()", "forked"),
    ("import numpy as np; return np.full(len(adv), np.nan)", "nan", "forked"),
    ("return None", "ничего не вернула", "forked"),
], ids=["sys_exit", "os_exit", "os_exit_spawned", "input", "nan", "none"])
def test_misbehaving_function_fails_only_its_own_checks(tmp_path, reference, body, words, workers):
    folder = submission(tmp_path, f"""
        def normalize_advantages(adv, eps=1e-8):
            {body}
    """)
    proc, data, checks = grade(tmp_path, folder, env={"HWKIT_ZYGOTE": "off"} if workers == "spawned" else None)
    assert failed(checks) == NORMALIZE_CHECKS
    for name in NORMALIZE_CHECKS:
        assert words.lower() in checks[name]["output"].lower(), checks[name]["output"]
    ref_checks = reference[2]
    for name, t in checks.items():  # every other check scores exactly what it scores on the reference
        if name not in NORMALIZE_CHECKS:
            assert t["score"] == ref_checks[name]["score"] and t["max_score"] == ref_checks[name]["max_score"]


def test_megabytes_of_output_change_nothing(tmp_path, reference):
    folder = submission(tmp_path, """
        import sys
        print("загрузка модуля " * 10_000)
        _reference_td_errors = td_errors

        def td_errors(rewards, values, last_value, gamma):
            for i in range(20_000):
                print("отладка", i, "#" * 100)
            sys.stderr.write("!" * 1_000_000)
            return _reference_td_errors(rewards, values, last_value, gamma)
    """)
    proc, data, checks = grade(tmp_path, folder)
    assert not failed(checks) and data["score"] == reference[1]["score"]
    assert len(proc.stdout) < 5_000 and "отладка" not in proc.stdout


def test_wrong_types_say_what_was_expected(tmp_path):
    folder = submission(tmp_path, """
        def td_errors(rewards, values, last_value, gamma):
            return "δ"

        def gae(rewards, values, last_value, gamma, lam):
            return None

        def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
            return np.ones(len(adv))
    """)
    proc, data, checks = grade(tmp_path, folder, "ppo::test_td_errors_courier", "ppo::test_gae_courier[lam0.5]",
                               "ppo::test_clip_five_cases_mean")
    assert "Ожидали:   массив чисел" in checks["test_td_errors_courier"]["output"]
    assert "Получили:  str" in checks["test_td_errors_courier"]["output"]
    assert "ничего не вернула" in checks["test_gae_courier[lam0.5]"]["output"]
    assert "одно число" in checks["test_clip_five_cases_mean"]["output"]
    assert "форма (5,)" in checks["test_clip_five_cases_mean"]["output"]


# ---- one check cannot change another --------------------------------------------------------------

def test_function_that_mutates_a_shared_list_does_not_break_later_checks(tmp_path):
    # td_errors appends to the caller's list (its change is copied back into the test's list, as in one process);
    # the test module passes the same COURIER_V list to every check: each check still grades as it does alone
    folder = submission(tmp_path, """
        _reference_td_errors = td_errors

        def td_errors(rewards, values, last_value, gamma):
            out = _reference_td_errors(rewards, values, last_value, gamma)
            if isinstance(values, list):
                values.append(last_value)
            return out
    """)
    names = ["test_td_errors_courier", "test_td_errors_last_value", "test_n_step_identity"]
    _, _, together = grade(tmp_path, folder, *[f"ppo::{n}" for n in names])
    for name in names:
        _, _, alone = grade(tmp_path, folder, f"ppo::{name}")
        assert alone[name]["status"] == together[name]["status"], (name, alone[name].get("output"))
    # where the check's own code trips over the changed list, the failure says so instead of a grader error
    for t in together.values():
        if t["status"] != "passed":
            assert "td_errors изменила свой аргумент `values` на месте" in t["output"], t["output"]


def test_global_random_state_is_fixed_per_check(tmp_path):
    """The plugin reseeds the global generators before each check: a reseed in one check does not leak into the next,
    and a check gives the same draw alone (the rerun command) as in the whole run."""
    (tmp_path / "conftest.py").write_text("pytest_plugins = ['grader.grading.plugin']\n", encoding="utf-8")
    (tmp_path / "test_rng.py").write_text(textwrap.dedent("""
        import json, random
        import numpy as np

        def test_reseeds():
            np.random.seed(123)   # what a student's function may do
            random.seed(123)

        def test_draws():
            with open("draws.jsonl", "a") as f:
                f.write(json.dumps([float(np.random.rand()), random.random()]) + "\\n")
    """), encoding="utf-8")

    def run(*selection):
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                               *selection, "--results-file", str(tmp_path / "events.jsonl")],
                              cwd=str(tmp_path), env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    run("test_rng.py")
    run("test_rng.py::test_draws")
    draws = [json.loads(line) for line in (tmp_path / "draws.jsonl").read_text().splitlines()]
    assert len(draws) == 2 and draws[0] == draws[1]
    np_after_reseed = __import__("numpy").random.RandomState(123).rand()
    assert draws[0][0] != np_after_reseed


def test_background_thread_left_running_does_not_hang_the_grader(tmp_path, reference):
    folder = submission(tmp_path, """
        import threading, time
        threading.Thread(target=time.sleep, args=(3600,)).start()
    """)
    proc, data, checks = grade(tmp_path, folder)
    assert not failed(checks) and data["score"] == reference[1]["score"]


def test_files_the_student_code_writes_do_not_land_in_the_repository_or_the_folder(tmp_path):
    name = "written-by-student-code-7c1f.txt"
    folder = submission(tmp_path, f"""
        with open("{name}", "w") as _f:
            _f.write("x")
    """)
    grade(tmp_path, folder, "ppo::test_td_errors_courier")  # checks the folder is unchanged
    assert not (ROOT / name).exists()
    assert not list(ROOT.rglob(name))


# ---- other parts -----------------------------------------------------------------------------------

def test_a_broken_part_changes_no_other_part(tmp_path):
    hw = homeworks.load(HW)
    others = [p.id for p in hw.parts if p.id != "ppo" and (hw.tests_dir / p.tests).is_file()
              and (hw.solutions_dir / f"{p.module}.py").is_file()]
    if not others:
        pytest.skip("the homework has no other part with checks and a solution yet")
    others = others[:2]  # the first two in the scoreboard's order are enough, and keep the test fast
    folder = tmp_path / "student"
    folder.mkdir()
    for path in hw.solutions_dir.glob("*.py"):
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "ppo.py").write_text("import os\nos._exit(1)\n", encoding="utf-8")  # kills the process on import
    before = snapshot(folder)
    broken = run_check(HW, *others, "ppo", "--dir", str(folder), "--csv", str(tmp_path / "b.csv"))
    clean = run_check(HW, *others, "--solutions", "--csv", str(tmp_path / "c.csv"))
    assert snapshot(folder) == before
    b = next(csv.DictReader(open(tmp_path / "b.csv", encoding="utf-8")))
    c = next(csv.DictReader(open(tmp_path / "c.csv", encoding="utf-8")))
    assert float(b["ppo"]) == 0 and "при загрузке модуля ppo.py" in broken.stdout
    assert {p: b[p] for p in others} == {p: c[p] for p in others}, (broken.stdout, clean.stdout)
    assert clean.returncode in (0, 1) and broken.returncode == 1


def test_a_hang_in_one_part_changes_no_other_part_graded_by_the_same_process(tmp_path):
    """With --jobs 1 every part is graded by one checking process, each part in a worker of its own: ending the
    worker of a part that hangs must not end its neighbours' (they keep their score and their confinement)."""
    hw = homeworks.load(HW)
    folder = tmp_path / "student"
    folder.mkdir()
    for path in hw.solutions_dir.glob("*.py"):
        (folder / path.name).write_bytes(path.read_bytes())
    dp = folder / "dp.py"
    dp.write_text(dp.read_text(encoding="utf-8") + "\n\ndef value_iteration(*args, **kwargs):\n    while True:\n"
                  "        pass\n", encoding="utf-8")
    parts = ["dp", "mc_td", "ppo"]  # dp first: its hang comes before the neighbours' checks
    broken = run_check(HW, *parts, "--dir", str(folder), "--jobs", "1", "--timeout", "2",
                       "--json", str(tmp_path / "b.json"))
    clean = run_check(HW, *parts, "--solutions", "--jobs", "1", "--json", str(tmp_path / "c.json"))

    def scores(name):
        data = json.loads((tmp_path / name).read_text(encoding="utf-8"))
        by_part = {}
        for t in data["tests"]:
            by_part.setdefault(t["extra_data"]["part"], []).append(t["status"])
        return by_part, data["extra_data"]["confinement"]

    (b, b_level), (c, c_level) = scores("b.json"), scores("c.json")
    assert "failed" in b["dp"] and "value_iteration не вернула ответ" in broken.stdout, broken.stdout
    assert {p: b[p] for p in ("mc_td", "ppo")} == {p: c[p] for p in ("mc_td", "ppo")}, broken.stdout
    assert b_level == c_level, (b_level, c_level)
    assert clean.returncode == 0, clean.stdout


def test_a_hang_is_blamed_on_the_function_the_check_called_not_on_a_shared_helper(tmp_path):
    """policy_iteration loops forever inside a helper that the correct policy_evaluation uses too: only the checks
    that call policy_iteration fail, each message names it, and policy_evaluation is graded for real."""
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "dp.py").write_text((ROOT / "solutions" / HW / "dp.py").read_text(encoding="utf-8") + textwrap.dedent("""

        def _checked(P, R, spin=False):
            while spin:
                pass
            return _validated(P, R)


        _reference_evaluation = policy_evaluation


        def policy_evaluation(P, R, policy, gamma, tol=1e-10):
            _checked(P, R)
            return _reference_evaluation(P, R, policy, gamma, tol)


        def policy_iteration(P, R, gamma):
            _checked(P, R, spin=True)
    """), encoding="utf-8")
    out = tmp_path / "r.json"
    proc = run_check(HW, "dp", "--dir", str(folder), "--json", str(out), "--timeout", "1")
    checks = {t["extra_data"]["check"]: t for t in json.loads(out.read_text(encoding="utf-8"))["tests"]}
    failed = {n: t for n, t in checks.items() if t["status"] != "passed"}
    assert failed, proc.stdout
    for name, t in failed.items():
        assert t["extra_data"]["kind"] in ("timeout", "hung"), (name, t["output"])
        assert "policy_iteration" in t["output"], (name, t["output"])
    first = next(t for t in failed.values() if t["extra_data"]["kind"] == "timeout")
    assert "функция policy_iteration не вернула ответ" in first["output"], first["output"]
    assert "функция _checked (dp.py, строка" in first["output"] and "вызванная из policy_iteration" in first["output"]
    others = [n for n in checks if any(f in n for f in ("policy_evaluation", "solve_bellman", "value_iteration"))]
    assert others and all(checks[n]["status"] == "passed" for n in others), proc.stdout
