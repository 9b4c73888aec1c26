"""The reference solutions pass every graded check; the untouched stubs fail every one cleanly."""
import pytest

from grader.base import homeworks
from grader.reporting import feedback
from kit import HW, run_check_json

pytestmark = pytest.mark.slow  # grades whole homeworks: left out of the everyday loop (-m "not slow")


@pytest.fixture(scope="module")
def solutions(tmp_path_factory):
    return run_check_json(tmp_path_factory.mktemp("solutions"), HW, "--solutions")


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    return run_check_json(tmp_path_factory.mktemp("stubs"), HW)


def test_solutions_pass_every_check(solutions):
    proc, data = solutions
    failed = [t["name"] + "\n" + t.get("output", "") for t in data["tests"] if t["status"] != "passed"]
    assert not failed, "\n\n".join(failed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "100%" in proc.stdout
    assert len(data["tests"]) >= 30


def test_stubs_fail_every_check_as_not_implemented(stubs):
    proc, data = stubs
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    passed = [t["name"] for t in data["tests"] if t["status"] == "passed"]
    assert not passed, f"checks that pass on untouched stubs: {passed}"
    not_todo = [t["name"] + ": " + t.get("output", "") for t in data["tests"] if t["extra_data"]["kind"] != "todo"]
    assert not not_todo, "checks that fail on the stubs without the not-implemented message:\n" + "\n".join(not_todo)
    assert data["score"] == 0
    assert "не реализовано (TODO)" in proc.stdout


def test_both_runs_grade_the_same_checks(solutions, stubs):
    assert [t["name"] for t in solutions[1]["tests"]] == [t["name"] for t in stubs[1]["tests"]]


def test_every_check_is_about_a_function_of_its_part(solutions):
    hw = homeworks.load(HW)
    functions = {p.id: feedback.function_order(hw, p) for p in hw.parts}
    stray = [t["name"] for t in solutions[1]["tests"]
             if t["extra_data"].get("subject") not in functions[t["extra_data"]["part"]]]
    assert not stray, f"checks whose subject is no function of their part's module: {stray}"
