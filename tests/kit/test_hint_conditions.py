"""A hint that names a cause is printed only where that cause fits the student's answer. Each case grades a
catalogued mistake on the one check, as the student reruns it, and looks for the cause's words in its hint:
- on a batch shifted by about 10⁸, "the digits are lost to the offset" (a one-pass variance) only when the function
  is right on the same batch without the offset;
- a learner called without alpha, gamma and epsilon is told its defaults differ from the signature only when it is
  right with them passed."""
from __future__ import annotations

import pytest

from catalogue import MUTANTS, mutant_folder
from kit import HW, run_check

CAUSES = {  # the check, and the words of its hint that blame the cause
    "one-pass": {"ppo": ("ppo::test_normalize_large_offset[17]", "в один проход"),
                 "boss": ("boss::test_masked_normalize_large_offset[9]", "E[Â²] − E[Â]²")},
    "defaults": {"control": ("control::test_defaults_and_both_flags[{name}-2]", "значения по умолчанию")},
}


@pytest.mark.parametrize("cause,part,mistake,told", [
    ("one-pass", "ppo", "normalize_one_pass_variance", True),
    ("one-pass", "ppo", "normalize_per_column", False),
    ("one-pass", "boss", "masked_normalize_one_pass", True),
    ("one-pass", "boss", "normalize_per_answer", False),
    ("one-pass", "boss", "normalize_over_padding", False),
    ("defaults", "control", "q_learning_default_gamma", True),
    ("defaults", "control", "q_learning_no_alpha", False),
    ("defaults", "control", "sarsa_both_flags_bootstrap", False),
])
def test_a_cause_is_blamed_only_where_it_fits(cause, part, mistake, told, tmp_path):
    _, _, folder = mutant_folder(MUTANTS / HW / part / f"{mistake}.py", tmp_path)
    check, words = CAUSES[cause][part]
    learner = "sarsa" if mistake.startswith("sarsa") else "q_learning"  # control's mistakes are named after it
    proc = run_check(HW, check.format(name=learner), "--dir", str(folder))
    hints = [line for line in proc.stdout.splitlines() if line.strip().startswith("Подсказка:")]
    assert "✗" in proc.stdout and len(hints) == 1, proc.stdout + proc.stderr  # the check failed, with its hint
    assert (words in hints[0]) == told, proc.stdout  # (a check's title may name the cause too: the hint's line only)
