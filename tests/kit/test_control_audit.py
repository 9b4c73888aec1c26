"""The audit of one cliff run (tests/<hw>/test_control.py::test_cliff_audit, run only in the grade) rejects every
typical mistake of q_learning and sarsa it can see on the cliff, each as the grade runs it: the update rules and the
returns by the exact recomputation, the exploration by its test against the replayed ε-greedy policy, and a learner
that only resets by the bookkeeping. The reference passes it (tests/kit/test_reference_and_stubs.py)."""
from __future__ import annotations

import pytest

from catalogue import MUTANTS, mutant_folder
from kit import HW, run_check_json

AUDITED = {  # mutant -> the audited learners it breaks
    "reset_only": ("q_learning", "sarsa"),
    "q_learning_behaviour_action": ("q_learning",), "q_learning_no_alpha": ("q_learning",),
    "q_learning_no_gamma": ("q_learning",), "q_learning_table_max": ("q_learning",),
    "q_learning_terminal_not_updated": ("q_learning",), "return_not_reset": ("q_learning",),
    "returns_discounted": ("q_learning",), "sarsa_greedy_target": ("sarsa",),
    "sarsa_resampled_next_action": ("sarsa",), "epsilon_not_passed": ("q_learning", "sarsa"),
    "explore_only_non_greedy": ("q_learning", "sarsa"), "epsilon_inverted": ("q_learning", "sarsa"),
    "argmax_first_tie": ("q_learning", "sarsa"), "q_learning_inline_first_tie": ("q_learning",),
}


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(AUDITED))
def test_the_cliff_audit_rejects(mutant, tmp_path):
    _, _, folder = mutant_folder(MUTANTS / HW / "control" / f"{mutant}.py", tmp_path)
    _, results = run_check_json(tmp_path, HW, "control::test_cliff_audit", "--dir", str(folder), "--show-hidden")
    audits = {t["extra_data"]["check"]: t for t in results["tests"]}
    assert sorted(audits) == ["test_cliff_audit[q_learning-0]", "test_cliff_audit[sarsa-0]"], sorted(audits)
    for name in AUDITED[mutant]:
        audit = audits[f"test_cliff_audit[{name}-0]"]
        assert audit["status"] == "failed" and audit["extra_data"]["kind"] == "check", audit
        if mutant == "reset_only":  # its empty journal recomputes to Q = 0: the bookkeeping rejects it
            assert "эпизодов без единого шага: " in audit["output"], audit["output"]
