"""A hint that names a cause is printed only where that cause fits the student's answer: on a batch shifted by about
10⁸, "the digits are lost to the offset" (a one-pass variance) is said only when the function is right on the same
batch without the offset. Each case grades a catalogued mistake on the one check, as the student reruns it."""
from __future__ import annotations

import pytest

from catalogue import MUTANTS, mutant_folder
from kit import HW, run_check

ONE_PASS = {"ppo": "в один проход", "boss": "E[Â²] − E[Â]²"}  # the words that blame a one-pass variance
CHECK = {"ppo": "ppo::test_normalize_large_offset[17]", "boss": "boss::test_masked_normalize_large_offset[9]"}


@pytest.mark.parametrize("part,mistake,told", [
    ("ppo", "normalize_one_pass_variance", True),
    ("ppo", "normalize_per_column", False),
    ("boss", "masked_normalize_one_pass", True),
    ("boss", "normalize_per_answer", False),
    ("boss", "normalize_over_padding", False),
])
def test_the_offset_is_blamed_only_where_the_answer_is_right_without_it(part, mistake, told, tmp_path):
    _, _, folder = mutant_folder(MUTANTS / HW / part / f"{mistake}.py", tmp_path)
    proc = run_check(HW, CHECK[part], "--dir", str(folder))
    hints = [line for line in proc.stdout.splitlines() if line.strip().startswith("Подсказка:")]
    assert "✗" in proc.stdout and len(hints) == 1, proc.stdout + proc.stderr  # the check failed, with its hint
    assert (ONE_PASS[part] in hints[0]) == told, proc.stdout  # (the check's title names the one-pass variance too)
