"""Each part's CPU budget: all its calls together (hidden checks included) may use ``cpu`` seconds of the worker's
CPU time; past it, the part's calls fail at once with a time message. The budget is recorded in parts.toml by
``python -m grader.grading.budget`` as max(2 × the per-check limit, 3 × the loop-heavy variant's CPU), and
``python -m grader.authoring.build --check`` says when it is stale. (A whole class with a CPU burner:
tests/kit/test_batch.py.)
"""
from __future__ import annotations

import dataclasses

import pytest

from grader.authoring import build
from grader.base import homeworks
from grader.base.homeworks import ROOT, cpu_budget
from grader.boundary import zygote
from grader.boundary.errors import BudgetSpent
from grader.grading import budget
from kit import HW

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib


def _with(hw, **changes_by_part) -> homeworks.Homework:
    """``hw`` with some parts' fields changed: ``ppo={"cpu": 3}``."""
    parts = tuple(dataclasses.replace(p, **changes_by_part.get(p.id, {})) for p in hw.parts)
    return dataclasses.replace(hw, parts=parts)


def test_a_part_without_a_recorded_budget_gets_twice_its_limit_and_an_other_limit_moves_it():
    part = homeworks.Part("p", "P", "p", "test_p.py", 10, timeout=5)
    assert part.budget() == 10  # the formula's first term
    recorded = dataclasses.replace(part, cpu=40, variant_cpu=4.1)
    assert recorded.budget() == 40 and recorded.budget(5) == 40  # as recorded, for the part's own limit
    assert recorded.budget(1) == 13  # --timeout 1: max(2 × 1, 3 × 4.1) rounded up
    assert recorded.budget(30) == 60
    assert cpu_budget(10, 0.1) == 20 and cpu_budget(1, 1.1) == 4 and cpu_budget(0.5) == 1


def test_the_kits_budgets_are_recorded_and_never_below_the_formula():
    """Every part of the homework with a loop-heavy variant has a budget and the figure it comes from; none is
    below max(2 × its limit, 3 × the figure) (python -m grader.grading.budget re-measures)."""
    hw = homeworks.load(HW)
    assert budget.variant_dir(hw).is_dir()
    assert budget.problems(hw) == []
    for p in hw.parts:
        assert p.cpu is not None and p.variant_cpu is not None, p.id
        assert p.cpu >= cpu_budget(p.timeout, p.variant_cpu) >= 2 * p.timeout, p.id


@pytest.mark.parametrize("change", [{"cpu": None}, {"variant_cpu": None}, {"timeout": 11},
                                    {"variant_cpu": 7.0}, {"cpu": 19}],
                         ids=["no-budget", "no-figure", "limit-raised", "variant-slower", "budget-lowered"])
def test_a_stale_budget_fails_the_build_check(monkeypatch, capsys, change):
    """ppo's recorded budget (20 s for a limit of 10 s) goes stale when the limit or the recorded figure rises
    past it, or it is missing: python -m grader.authoring.build --check then names parts.toml and exits 1."""
    hw = homeworks.load(HW)
    stale_hw = _with(hw, ppo=change)
    assert budget.problems(stale_hw) and budget.stale(stale_hw) == [budget.parts_file(hw)]
    monkeypatch.setattr(homeworks, "load", lambda name: stale_hw if name == HW else hw)
    assert build.main(["--check", HW]) == 1
    assert f"out of date: tests/{HW}/parts.toml" in capsys.readouterr().out


def test_a_homework_without_a_variant_records_no_budget(tmp_path, monkeypatch):
    """Nothing to measure, nothing stale: its parts get 2 × their limit."""
    hw = _with(homeworks.load(HW), **{p.id: {"cpu": None, "variant_cpu": None} for p in homeworks.load(HW).parts})
    monkeypatch.setattr(budget, "variant_dir", lambda hw: tmp_path / "none")
    assert budget.problems(hw) == [] and all(p.budget() == 2 * p.timeout for p in hw.parts)


def test_recording_writes_the_budget_after_the_limit_and_keeps_the_rest_of_the_file():
    text = (ROOT / "tests" / HW / "parts.toml").read_text(encoding="utf-8")
    values = {"dp": (13.0, 4.3), "boss": (120.0, 15.7)}
    new = budget.rewrite(text, values)
    parts = {p["id"]: p for p in tomllib.loads(new)["part"]}
    assert (parts["dp"]["cpu"], parts["dp"]["variant_cpu"]) == (13, 4.3)
    assert parts["dp"]["timeout_hints"] == tomllib.loads(text)["part"][0]["timeout_hints"]  # a table after it
    assert budget.rewrite(new, values) == new  # written once, not once per run
    old_lines = [line for line in text.splitlines() if not line.startswith(("cpu =", "variant_cpu ="))]
    assert [line for line in new.splitlines() if not line.startswith(("cpu =", "variant_cpu ="))] == old_lines
    lines = new.splitlines()
    at = lines.index("cpu = 13")
    assert lines[at - 1] == "timeout = 5" and lines[at + 1] == "variant_cpu = 4.3"


@pytest.mark.skipif(not zygote.available(), reason="the worker's CPU time is read from the kernel through the zygote")
def test_past_the_budget_a_call_fails_at_once_without_reaching_the_students_code(tmp_path):
    """A td_errors that computes for 0.4 s of CPU in every call, a limit of 1 s per call, a budget of 1 s for the
    part: two calls answer, the third ends where the budget does, and the fourth fails at once, without a worker
    to run it (the third's was ended and no new one is started)."""
    from grader.boundary.session import Session

    hw = homeworks.load(HW)
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "ppo.py").write_text(
        (hw.solutions_dir / "ppo.py").read_text(encoding="utf-8")
        + "\n\nimport time as _time\n_td_errors = td_errors\n\n\ndef td_errors(*args, **kwargs):\n"
          "    end = _time.process_time() + 0.4\n    while _time.process_time() < end:\n        pass\n"
          "    return _td_errors(*args, **kwargs)\n", encoding="utf-8")
    session = Session(hw, folder, 1.0, budget=1.0)
    try:
        td_errors = session.module("ppo").td_errors
        args = ([1.0, 0.0, 2.0], [2.0, 1.5, 1.0], 0.0, 0.9)
        for _ in range(2):
            assert len(td_errors(*args)) == 3
        assert 0.7 < session.spent < 1.0, session.spent
        with pytest.raises(BudgetSpent, match=r"превышено общее время части \(1 с\).*не успела вернуть ответ"):
            td_errors(*args)
        assert session.link.worker is None and session.spent == 1.0
        with pytest.raises(BudgetSpent, match="функция td_errors не запускалась"):
            td_errors(*args)
        assert session.link.worker is None and session.spent == 1.0  # no worker started, nothing charged
        assert not session.hung  # the budget ran out, not the function's own limit
    finally:
        session.close()
