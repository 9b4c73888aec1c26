"""The grader's command line: exit codes, usage errors, selections, verbosity."""
from kit import HW, run_check


def test_unknown_homework_lists_what_exists():
    proc = run_check("s6-hw99-nothing")
    assert proc.returncode == 2
    assert "s6-hw99-nothing" in proc.stderr and HW in proc.stderr


def test_unknown_part_lists_parts():
    proc = run_check(HW, "nonsense")
    assert proc.returncode == 2
    assert "nonsense" in proc.stderr and "ppo" in proc.stderr


def test_no_homework_is_a_usage_error():
    proc = run_check()
    assert proc.returncode == 2 and HW in proc.stderr


def test_bad_option_is_a_usage_error():
    proc = run_check(HW, "--no-such-option")
    assert proc.returncode == 2 and "ошибка" in proc.stderr


def test_missing_notebook_or_folder_is_a_usage_error(tmp_path):
    assert run_check(HW, "--notebook", str(tmp_path / "none.ipynb")).returncode == 2
    assert run_check(HW, "--dir", str(tmp_path / "none")).returncode == 2


def test_one_check_can_be_rerun_by_the_printed_command():
    proc = run_check(HW, "ppo")
    assert proc.returncode == 1
    line = next(ln for ln in proc.stdout.splitlines() if "Повторить:" in ln) if "Повторить:" in proc.stdout else None
    # on untouched stubs failures are grouped as TODO; a rerun line appears for real check failures
    assert line is None or HW in line
    proc = run_check(HW, "ppo::test_gae_courier[lam0.95]", "--solutions")
    assert proc.returncode == 0, proc.stdout
    assert "1/1" in proc.stdout and "только выбранные проверки" in proc.stdout


def test_unknown_check_name_is_reported():
    proc = run_check(HW, "ppo::test_no_such_check")
    assert proc.returncode == 1
    assert "нет проверки с таким именем" in proc.stdout


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
    verbose = run_check(HW, "ppo::test_td_errors_courier", "--dir", str(folder), "-v")
    assert "test_ppo.py" in verbose.stdout  # -v shows where it failed


def test_help_and_usage_errors_speak_russian():
    proc = run_check("--help")
    assert proc.returncode == 0
    assert "использование:" in proc.stdout and "опции:" in proc.stdout and "usage:" not in proc.stdout
    proc = run_check(HW, "--jobs", "x")
    assert proc.returncode == 2 and "нужно целое число" in proc.stderr and "invalid" not in proc.stderr
