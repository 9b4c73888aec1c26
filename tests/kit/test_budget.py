"""Each part's CPU budget: all its calls together (hidden checks included) may use ``cpu`` seconds of the worker's
CPU time (max(2 × the per-check limit, 3 × the loop-heavy variant's CPU); without a recorded figure, 2 × the limit);
past it, the part's calls fail at once with a time message.
"""
from __future__ import annotations

import dataclasses

import pytest

from grader import homeworks
from grader.boundary import zygote
from grader.boundary.errors import BudgetSpent
from grader.homeworks import cpu_budget
from kit import HW


def test_a_part_without_a_recorded_budget_gets_twice_its_limit_and_an_other_limit_moves_it():
    part = homeworks.Part("p", "P", "p", "test_p.py", 10, timeout=5)
    assert part.budget() == 10  # the formula's first term
    recorded = dataclasses.replace(part, cpu=40, variant_cpu=4.1)
    assert recorded.budget() == 40 and recorded.budget(5) == 40  # as recorded, for the part's own limit
    assert recorded.budget(1) == 13  # --timeout 1: max(2 × 1, 3 × 4.1) rounded up
    assert recorded.budget(30) == 60
    assert cpu_budget(10, 0.1) == 20 and cpu_budget(1, 1.1) == 4 and cpu_budget(0.5) == 1


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
