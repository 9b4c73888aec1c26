"""The grader's command line: exit codes, usage errors, selections, verbosity."""
import json
import shutil

import pytest

from grader.base.homeworks import ROOT
from kit import HW, run_check

ONE = "ppo::test_td_errors_courier"
SOLUTIONS = str(ROOT / "solutions" / HW)


@pytest.fixture(scope="module")
def ppo_checks() -> int:
    """How many checks the ppo part has (as --list shows them)."""
    listed = run_check(HW, "ppo", "--list").stdout
    return sum(line.strip().startswith('"ppo::') for line in listed.splitlines())
TD_ERRORS = ("import numpy as np\n"
             "def td_errors(rewards, values, last_value, gamma):\n"
             "    v = np.asarray(values, float)\n"
             "    return np.asarray(rewards, float) + gamma * np.append(v[1:], last_value) - v\n")


def usage_error(proc, *words: str) -> str:
    """Exit 2, nothing graded, one line in Russian on stderr that holds ``words``."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "", proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ошибка: "), proc.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def notebook(path, source: str):
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
                                           "execution_count": None}],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


def test_unknown_homework_lists_what_exists():
    proc = run_check("s6-hw99-nothing")
    assert proc.returncode == 2
    assert "s6-hw99-nothing" in proc.stderr and HW in proc.stderr


def test_unknown_part_lists_parts():
    proc = run_check(HW, "nonsense")
    assert proc.returncode == 2
    assert "nonsense" in proc.stderr and "ppo" in proc.stderr


def test_unknown_part_suggests_the_closest_name():
    usage_error(run_check(HW, "pp0"), "нет части «pp0»", "Может быть, ppo?")


def test_a_part_without_the_homework_says_the_order():
    usage_error(run_check("ppo"), "«ppo» — часть, а не домашняя работа", f"python homework/check.py {HW} ppo")


@pytest.mark.parametrize("args", [
    [HW, "-v", ONE, "--solutions"],
    [HW, "--solutions", ONE],
    ["--solutions", HW, ONE],
    [HW, "--dir", SOLUTIONS, ONE],
    ["--jobs", "1", HW, "--timeout", "30", ONE, "--solutions"],
], ids=["verbose_first", "source_first", "options_before_homework", "dir_before_part", "numbers_between"])
def test_options_may_stand_before_or_after_the_parts(args, ppo_checks):
    proc = run_check(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"1/1 из {ppo_checks}" in proc.stdout and "Выбранные проверки пройдены" in proc.stdout, proc.stdout


def test_notebook_option_before_the_part(tmp_path, ppo_checks):
    path = notebook(tmp_path / "student.ipynb", TD_ERRORS)
    proc = run_check(HW, "--notebook", str(path), ONE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"тетрадка {path}" in proc.stdout and f"1/1 из {ppo_checks}" in proc.stdout, proc.stdout


def test_no_homework_is_a_usage_error():
    proc = run_check()
    assert proc.returncode == 2 and HW in proc.stderr


def test_bad_option_is_a_usage_error():
    proc = run_check(HW, "--no-such-option")
    assert proc.returncode == 2 and "ошибка" in proc.stderr


def test_missing_notebook_or_folder_is_a_usage_error(tmp_path):
    usage_error(run_check(HW, "--notebook", str(tmp_path / "none.ipynb")), "такого файла нет", ".ipynb")
    usage_error(run_check(HW, "--dir", str(tmp_path / "none")), "такой папки нет", "папку с модулями")


def test_a_path_of_the_wrong_kind_says_which_option_fits():
    usage_error(run_check(HW, "--notebook", "README.md", "ppo"), "--notebook README.md: это не тетрадка", "--dir")
    usage_error(run_check(HW, "--dir", "README.md", "ppo"), "--dir README.md: это файл", "папку с модулями")
    usage_error(run_check(HW, "--notebook", "homework", "ppo"), "это папка", "--dir homework")


def test_a_notebook_that_is_not_json_is_reported_once(tmp_path):
    path = tmp_path / "broken.ipynb"
    path.write_text('{"cells": [', encoding="utf-8")
    line = usage_error(run_check(HW, "--notebook", str(path)), "это не JSON", "строка 1", "сохраните заново")
    assert line.count("не JSON") == 1
    (tmp_path / "empty.ipynb").write_text("{}", encoding="utf-8")
    usage_error(run_check(HW, "--notebook", str(tmp_path / "empty.ipynb")), "не тетрадка Jupyter")


def test_bad_numbers_and_misplaced_options_are_usage_errors():
    usage_error(run_check(HW, "--jobs", "0"), "--jobs 0", "не меньше 1")
    usage_error(run_check(HW, "--timeout", "-1"), "--timeout -1", "больше 0")
    usage_error(run_check(HW, "ppo", "--feedback", "out"), "--feedback", "--batch")
    usage_error(run_check(HW, "--solutions", "--dir", "x"), "нельзя вместе с --solutions")
    usage_error(run_check(HW, "--solutoins"), "неизвестная опция --solutoins", "Может быть, --solutions?")


def test_one_check_can_be_rerun_by_the_printed_command():
    proc = run_check(HW, "ppo")
    assert proc.returncode == 1
    line = next(ln for ln in proc.stdout.splitlines() if "Повторить:" in ln) if "Повторить:" in proc.stdout else None
    # on untouched stubs failures are grouped as TODO; a rerun line appears for real check failures
    assert line is None or HW in line
    proc = run_check(HW, "ppo::test_gae_courier[lam0.95]", "--solutions")
    assert proc.returncode == 0, proc.stdout
    assert "1/1" in proc.stdout and "только выбранные проверки" in proc.stdout


def test_one_check_is_scored_as_one_check_not_as_the_part(ppo_checks):
    proc = run_check(HW, "ppo::test_gae_courier[lam0.95]", "--solutions")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    row = next(line for line in out.splitlines() if line.startswith("✓ ppo"))
    assert f"1/1 из {ppo_checks}" in row and "20/20" not in row, row  # the checks run and what they are worth
    assert "оценки за часть здесь нет" in out and "Итого:" not in out and "100%" not in out, out
    assert "Все проверки пройдены" not in out and "Отличная работа" not in out, out
    assert f'Выбранные проверки пройдены. Оценка за часть — после всех её проверок: python homework/check.py {HW} ' \
           '--solutions "ppo"' in out, out
    # a whole part next to a single check: the part is scored, the check is not passed off as its part
    proc = run_check(HW, "dp", "ppo::test_gae_courier[lam0.95]", "--solutions")
    assert "Итого: 15 из 15" in proc.stdout and f"1/1 из {ppo_checks}" in proc.stdout, proc.stdout


def test_a_subset_of_checks_shows_what_they_are_worth(tmp_path, ppo_checks):
    proc = run_check(HW, "ppo::test_gae_courier", "ppo::test_td_errors_courier")  # the stubs: all fail
    assert proc.returncode == 1
    row = next(line for line in proc.stdout.splitlines() if line.startswith("✗ ppo"))
    worth = row.split()[-1].split("/")[1]  # what the 5 checks of a 20-point part are worth
    assert f"0/5 из {ppo_checks}" in row and 0 < float(worth) < 20, row
    assert f"Выбранные проверки: пройдено 0 из 5, 0 из {worth} балла" in proc.stdout, proc.stdout


def test_unknown_check_name_is_a_usage_error_with_close_names():
    usage_error(run_check(HW, "ppo::test_no_such_check"), "в части ppo нет проверки «test_no_such_check»",
                f"python homework/check.py {HW} ppo --list")
    usage_error(run_check(HW, "ppo::test_gae_courie", "--solutions"), "Может быть, ppo::test_gae_courier")
    usage_error(run_check(HW, "ppo::test_gae_courier[lam0.7]"), "нет варианта «[lam0.7]»", "test_gae_courier[lam0.5]")


def test_list_with_a_part_shows_its_checks():
    proc = run_check(HW, "ppo", "--list")
    assert proc.returncode == 0 and '"ppo::test_gae_courier[lam0.95]"' in proc.stdout, proc.stdout


@pytest.mark.slow  # grades a whole homework
def test_the_first_run_on_untouched_stubs_says_what_to_do():
    proc = run_check(HW)
    assert proc.returncode == 1
    out = proc.stdout
    assert "0 из 100 — нормальный старт" in out, out
    assert f"Условие: homework/{HW}/README.md" in out
    assert "Начните с части dp" in out and f"homework/{HW}/dp.py" in out
    assert f"python homework/check.py {HW} dp" in out
    assert "добавьте -v" not in out  # a traceback of a TODO says nothing new
    # one line per part, not one per function or per check
    assert sum(line.startswith("✗ [") for line in out.splitlines()) == 6, out


def test_verbose_on_todo_shows_one_traceback_per_function():
    proc = run_check(HW, "ppo", "-v")
    out = proc.stdout
    for func in ("td_errors", "gae", "ppo_clip_objective", "ppo_loss"):
        assert out.count(f"NotImplementedError: TODO: {func}\n") == 1, out
    assert len(out.splitlines()) < 400, len(out.splitlines())


def test_list_shows_parts():
    proc = run_check("--list")
    assert proc.returncode == 0 and HW in proc.stdout and "ppo" in proc.stdout


def test_failure_shows_expected_got_hint_and_rerun(tmp_path):
    folder = tmp_path / "impl"
    folder.mkdir()
    (folder / "ppo.py").write_text(
        "import numpy as np\n"
        "def td_errors(rewards, values, last_value, gamma):\n"
        "    v = np.asarray(values, float)\n"
        "    return np.asarray(rewards, float) + np.append(v[1:], last_value) - v\n", encoding="utf-8")
    proc = run_check(HW, "ppo::test_td_errors_courier", "--dir", str(folder))
    assert proc.returncode == 1
    out = proc.stdout
    assert "Ожидали:" in out and "Получили:" in out and "Подсказка:" in out
    assert "γ не умножен на V(s_{t+1})" in out  # the typical mistake is named
    assert f'python homework/check.py {HW} --dir {folder} "ppo::test_td_errors_courier"' in out
    assert "Traceback" not in out
    verbose = run_check(HW, "ppo::test_td_errors_courier", "--dir", str(folder), "-v").stdout
    # -v on a wrong answer: the call that gave it, arguments summarised, and the answer; no frame of pytest or the
    # grader (the expected value is in the block already)
    assert "| Вызов: td_errors([1, 0, 2], [2, 1.5, 1], 0, 0.9)" in verbose, verbose
    assert "| Ответ: массив (3,) float64: [0.5, -0.5, 1]" in verbose, verbose
    assert not [w for w in ("test_ppo.py", "_pytest", "pluggy", "grader/", "Traceback") if w in verbose], verbose


def test_verbose_on_an_error_shows_the_call_and_the_students_traceback(tmp_path):
    folder = tmp_path / "impl"
    folder.mkdir()
    (folder / "ppo.py").write_text("def td_errors(rewards, values, last_value, gamma):\n    return last_value[0]\n",
                                   encoding="utf-8")
    out = run_check(HW, ONE, "--dir", str(folder), "-v").stdout
    assert "| Вызов: td_errors([1, 0, 2], [2, 1.5, 1], 0, 0.9)" in out, out
    assert f'|   File "{folder / "ppo.py"}", line 2, in td_errors' in out and "TypeError" in out, out
    assert not [w for w in ("test_ppo.py", "_pytest", "pluggy", "grader/") if w in out], out


def test_verbose_on_a_call_that_never_answered_shows_the_call_not_the_graders_frames(tmp_path):
    folder = tmp_path / "impl"
    folder.mkdir()
    (folder / "ppo.py").write_text("import os\ndef td_errors(rewards, values, last_value, gamma):\n    os._exit(3)\n",
                                   encoding="utf-8")
    out = run_check(HW, ONE, "--dir", str(folder), "-v").stdout
    assert "| Вызов: td_errors([1, 0, 2], [2, 1.5, 1], 0, 0.9)" in out and "| Ответ: нет" in out, out
    assert not [w for w in ("_pytest", "pluggy", "grader/", "Traceback") if w in out], out


def test_help_and_usage_errors_speak_russian():
    proc = run_check("--help")
    assert proc.returncode == 0
    assert proc.stdout.startswith("использование: python homework/check.py [-h]"), proc.stdout[:200]
    assert "опции:" in proc.stdout and "usage:" not in proc.stdout
    proc = run_check(HW, "--jobs", "x")
    assert proc.returncode == 2 and "нужно целое число" in proc.stderr and "invalid" not in proc.stderr


def test_build_check_says_in_one_line_that_everything_is_fresh():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "grader.authoring.build", "--check"], cwd=str(ROOT),
                          capture_output=True, text=True, encoding="utf-8")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("up to date:") and HW in lines[0], proc.stdout


def test_every_required_check_passed_is_success_whatever_the_bonus(tmp_path):
    """The reference ppo without its bonus function: full marks, exit 0, the part marked done, the bonus shown as
    missing; the total is one number, to 2 decimals, in the scoreboard and the JSON."""
    folder = tmp_path / "work"
    shutil.copytree(ROOT / "solutions" / HW, folder, ignore=shutil.ignore_patterns("__pycache__"))
    ppo = folder / "ppo.py"
    ppo.write_text(ppo.read_text(encoding="utf-8") + "\n\ndef clipped_value_loss(*args, **kwargs):\n"
                   "    raise NotImplementedError\n", encoding="utf-8")
    out = tmp_path / "r.json"
    proc = run_check(HW, "ppo", "--dir", str(folder), "--json", str(out))
    assert proc.returncode == 0, proc.stdout
    row = next(line for line in proc.stdout.splitlines() if " ppo " in line)
    assert row.startswith("✓") and "20/20 +0/2 бонус" in row, row
    assert "не хватает только бонуса" in proc.stdout
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["score"] == 20 and "Итого: 20 из 20" in proc.stdout


def test_without_the_installed_packages_one_line_says_how_to_install_them():
    """Skipping the install: one Russian line with the command, exit 2, no scoreboard (python -S: no site-packages,
    as before pip install)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-S", str(ROOT / "homework" / "check.py"), HW], capture_output=True,
                          text=True, encoding="utf-8", cwd=str(ROOT), timeout=60)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "не установлены пакеты" in lines[0] and "python -m pip install -e ." in lines[0], lines


def test_the_reference_graded_by_an_instructor_is_not_praised_as_a_students_work():
    proc = run_check(HW, "ppo", "--solutions")
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.rstrip().endswith("Эталонные решения проходят все проверки.")
    assert "Отличная работа" not in proc.stdout and "Ваш код" not in proc.stdout


def test_plain_pytest_shows_the_students_stub_line_not_the_graders_frames():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"tests/{HW}/test_ppo.py", "-k", "test_td_errors_courier"],
                          capture_output=True, text=True, encoding="utf-8", cwd=str(ROOT), timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "не реализовано (TODO): td_errors" in proc.stdout
    assert f"homework/{HW}/ppo.py\", line" in proc.stdout
    assert 'raise NotImplementedError("TODO: td_errors")' in proc.stdout
    assert "grader/" not in proc.stdout, proc.stdout


def test_verbose_shows_the_answer_around_the_item_that_differs(tmp_path):
    """-v on a wrong array answer: the answer line shows the first differing item (here the 5th of 5–29), never cut
    just before it or hidden behind «…»."""
    folder = tmp_path / "impl"
    folder.mkdir()
    (folder / "ppo.py").write_text(
        "import numpy as np\n"
        "def td_errors(rewards, values, last_value, gamma):\n"
        "    v = np.asarray(values, float)\n"
        "    d = np.asarray(rewards, float) + gamma * np.append(v[1:], last_value) - v\n"
        "    d[4] = 123.25\n"
        "    return d\n", encoding="utf-8")
    out = run_check(HW, "ppo::test_td_errors_random", "--dir", str(folder), "-v").stdout
    assert "Первое расхождение в позиции 4" in out and "получили 123.25" in out, out
    answers = [line for line in out.splitlines() if "| Ответ: массив" in line]
    assert answers and all("123.25" in line for line in answers), out
