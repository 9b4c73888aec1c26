"""Every row of README's "For instructors" table on the base install (``pip install -e .``: numpy, pytest, tomli):
it runs, or it exits 2 with one line naming the extra to install (grader.base.extras), never a traceback.

The extras' packages are made unimportable in the processes the rows start (a ``sitecustomize`` that sets them to
None in ``sys.modules``), as ``python -S`` leaves out site-packages in test_cli's test of the student's command."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.base.homeworks import ROOT
from kit import HW

pytestmark = pytest.mark.slow  # grades a class of one: left out of the everyday loop (-m "not slow")

EXTRAS = ("nbformat", "nbclient", "matplotlib", "ipykernel", "yaml", "copydetect")  # the extras' packages
BLOCKER = "import sys\nfor _name in {names!r}:\n    sys.modules[_name] = None\n"
DEV = 'python -m pip install -e ".[dev]"'
PY = [sys.executable]
CHECK = [*PY, "homework/check.py", HW]

# README's command cell -> the runs that prove the row: (argv, the exit codes it may end with; 2 means "with the one
# line naming the extra"). {t} is the test's folder; a row that grades is given one part where that is its meaning.
# grading_speed (37 s of CPU with --quick: it measures every part), class_with_burner (a class and a burner: 7 s at
# the least), results_flow (a class of two: 5 s) and grader.authoring.constraints (new venvs, downloads) show only
# their --help here; without nbformat grading_speed
# prints «the solved notebook (--notebook): not measured» with grader.base.extras' line and measures the rest (seen by
# hand).
ROWS = {
    "`python homework/check.py s6-hw00-rl-foundations --solutions`": [([*CHECK, "dp", "--solutions"], {0})],
    "`python homework/check.py s6-hw00-rl-foundations --dir PATH`": [([*CHECK, "dp", "--dir", f"solutions/{HW}"], {0})],
    "`python homework/check.py s6-hw00-rl-foundations --notebook PATH.ipynb`":
        [([*CHECK, "dp", "--notebook", f"notebooks/{HW}.ipynb"], {1})],  # the stubs' notebook: checks fail
    "`python -m grader.authoring.notebook_build s6-hw00-rl-foundations --solved OUT.ipynb`":
        [([*PY, "-m", "grader.authoring.notebook_build", HW, "--solved", "{t}/solved.ipynb"], {2})],
    "`... --json results.json --csv scores.csv`":
        [([*CHECK, "dp", "--solutions", "--json", "{t}/r.json", "--csv", "{t}/r.csv"], {0})],
    "`python homework/check.py s6-hw00-rl-foundations --batch DIR --csv scores.csv --feedback OUT`":
        [([*CHECK, "--batch", "{t}/class", "--csv", "{t}/scores.csv", "--feedback", "{t}/fb", "--report",
           "{t}/report", "--lms", "canvas", "--roster", "{t}/roster.csv", "--lms-file", "{t}/canvas.csv"], {0})],
    "`... --batch DIR --csv scores.csv --report REPORT`, then "
    "`python -m grader.reporting.class_report REPORT/records OUT "
    "--anonymize` or `python -m grader.reporting.class_report EXPORT.zip OUT`":
        [([*PY, "-m", "grader.reporting.class_report", "{t}/report/records", "{t}/anon", "--anonymize"], {0})],
    "`... --batch DIR --report REPORT --lms canvas --roster roster.csv`, or `python -m grader.reporting.class_report "
    "REPORT/records OUT --lms moodle --roster roster.csv`":
        [([*PY, "-m", "grader.reporting.class_report", "{t}/report/records", "{t}/moodle", "--lms", "moodle",
           "--roster", "{t}/roster.csv", "--lms-file", "{t}/moodle.csv"], {0})],
    "`python -m pip install -c constraints.txt -e \".[report]\"`, then `... --batch DIR --report REPORT`, or "
    # without copydetect: the section says so
    "`python -m grader.reporting.class_report REPORT/records OUT --code DIR`":
        [([*PY, "-m", "grader.reporting.class_report", "{t}/report/records", "{t}/alike", "--code", "{t}/class"], {0})],
    "`python benchmarks/class_report.py [--alike]`": [([*PY, "benchmarks/class_report.py", "--n", "10"], {0})],
    "`python -m grader.authoring.release OUT_DIR --classroom`":
        [([*PY, "-m", "grader.authoring.release", "{t}/copy", "--classroom"], {2}),
         ([*PY, "-m", "grader.authoring.release", "{t}/copy", "--classroom", "--force"], {0})],
    "see [docs/github-classroom.md](docs/github-classroom.md)": [],  # a page to read
    "`python -m grader.gradescope autograder.zip`, see [docs/gradescope.md](docs/gradescope.md)":
        [([*PY, "-m", "grader.gradescope", "{t}/autograder.zip"], {2})],
    "`python benchmarks/grading_speed.py`": [([*PY, "benchmarks/grading_speed.py", "--help"], {0})],
    "`python benchmarks/boss_frontier.py`":
        [([*PY, "benchmarks/boss_frontier.py", "--seeds", "0", "--betas", "0.5", "--updates", "5"], {0})],
    "`python benchmarks/boss_margins.py`":
        [([*PY, "benchmarks/boss_margins.py", "--seeds", "0", "1", "--what", "goal"], {0})],
    "`python benchmarks/cliff_margins.py`":
        [([*PY, "benchmarks/cliff_margins.py", "--runs", "20", "--episodes", "60", "--draws", "1000"], {0})],
    "`python benchmarks/kit_suite_cost.py --install`": [([*PY, "benchmarks/kit_suite_cost.py", "--install"], {2})],
    "`python benchmarks/feedback_quality.py`":
        [([*PY, "benchmarks/feedback_quality.py", "--part", "dp", "--mutant", "eval_max_over_actions"], {0})],
    "`python -m grader.authoring.build` (`--check` only reports what is stale)":
        [([*PY, "-m", "grader.authoring.build"], {2}), ([*PY, "-m", "grader.authoring.build", "--check"], {2})],
    "`python -m grader.grading.budget [HW] [--check]`": [([*PY, "-m", "grader.grading.budget", HW, "--check"], {0})],
    "`python benchmarks/class_with_burner.py`": [([*PY, "benchmarks/class_with_burner.py", "--help"], {0})],
    "`python benchmarks/results_flow.py [--part dp]`": [([*PY, "benchmarks/results_flow.py", "--help"], {0})],
    "`python -m grader.authoring.constraints`": [([*PY, "-m", "grader.authoring.constraints", "--help"], {0})],
    "`python homework/check.py --list`": [([*PY, "homework/check.py", "--list"], {0})],
    "`... --public` / `... --show-hidden`":
        [([*CHECK, "dp", "--solutions", "--public"], {0}), ([*CHECK, "dp", "--solutions", "--show-hidden"], {0})],
    "`python -m grader.grading.secret s6-hw00-rl-foundations [--new \\| --record]`":
        [([*PY, "-m", "grader.grading.secret", HW], {0})],
    "`python -m grader.grading.public_answers [HW [PART ...]] [--check]`":
        [([*PY, "-m", "grader.grading.public_answers", HW, "dp", "--check"], {0})],
}


def readme_rows() -> list[str]:
    """The command cells of README's "For instructors" table."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").split("## For instructors", 1)[1].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(first, len(lines)) if not lines[i].startswith("|")), len(lines))
    return [line.rsplit(" | ", 1)[1].removesuffix(" |") for line in lines[first + 2:end]]


def test_every_row_of_the_table_is_run_here():
    """A row added to README's table, or a command changed in it, needs its run above."""
    assert sorted(readme_rows()) == sorted(ROWS)


@pytest.fixture(scope="module")
def base_install(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """(the test's folder, the environment of a base install): the extras' packages unimportable, a class of one
    (the reference's modules), its roster and an instructor's own secret (a grade for the record goes to an LMS)."""
    t = tmp_path_factory.mktemp("base")
    (t / "block").mkdir()
    (t / "block" / "sitecustomize.py").write_text(BLOCKER.format(names=EXTRAS), encoding="utf-8")
    (t / "class" / "alice").mkdir(parents=True)
    for module in (ROOT / "solutions" / HW).glob("*.py"):
        shutil.copy(module, t / "class" / "alice" / module.name)
    (t / "roster.csv").write_text("submission,lms_id\nalice,alice@example.org\n", encoding="utf-8")
    (t / "secret").write_text("an instructor's own secret\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(t / "block"), PYTHONDONTWRITEBYTECODE="1",
               HWKIT_SECRET_FILE=str(t / "secret"))
    for name in EXTRAS:
        proc = subprocess.run([sys.executable, "-c", f"import {name}"], env=env, capture_output=True)
        assert proc.returncode == 1, f"{name} is still importable: the test would prove nothing"
    # the grade for the record reads the key's answers on that secret's hidden inputs, recorded once beside it
    proc = subprocess.run([*PY, "-m", "grader.grading.secret", HW, "--record"], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return t, env


@pytest.mark.parametrize("row", list(ROWS))
def test_each_row_runs_or_names_the_extra_in_one_line(base_install, row):
    t, env = base_install
    if "--anonymize" in row or "--lms moodle" in row or "--code" in row:  # from the batch's records
        _run(ROWS["`python homework/check.py s6-hw00-rl-foundations --batch DIR --csv scores.csv --feedback OUT`"][0],
             t, env)
    for argv, codes in ROWS[row]:
        _run((argv, codes), t, env)
    if "--code" in row:  # the section on alike submissions says what to install
        assert '.[report]' in (t / "alike" / "index.html").read_text(encoding="utf-8")


def _run(run: tuple[list[str], set[int]], t: Path, env: dict[str, str]) -> None:
    argv, codes = run
    argv = [arg.replace("{t}", str(t)) for arg in argv]
    if "--batch" in argv and (t / "report" / "records").is_dir():
        return  # graded once for the rows that read its records
    if "grader.gradescope" in argv:  # the zip ships the kit's own secret (key/secret), never a file named elsewhere
        env = {k: v for k, v in env.items() if k != "HWKIT_SECRET_FILE"}
    proc = subprocess.run(argv, cwd=str(ROOT), env=env, capture_output=True, text=True, encoding="utf-8",
                          timeout=600)
    shown = f"{' '.join(argv)}\nexit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stdout + proc.stderr, shown
    assert proc.returncode in codes, shown
    if proc.returncode == 2:
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and DEV in lines[0] and re.search(r"needs (nbformat|nbclient|yaml)", lines[0]), shown
