"""A hint that names a cause is printed only where that cause fits the student's answer. Each case grades a
catalogued mistake on the one check, as the student reruns it, and looks for the cause's words in its hint:
- on a batch shifted by about 10⁸, "the digits are lost to the offset" (a one-pass variance) only when the function
  is right on the same batch without the offset;
- a function called without its γ, λ (or α, γ, ε) is told its defaults differ from the signature only when it is
  right with them passed, whatever the form of a right answer (a list for a tuple, keyword-only parameters)."""
from __future__ import annotations

import pytest

from catalogue import MUTANTS, mutant_folder
from kit import HW, run_check

CAUSES = {  # the check, and the words of its hint that blame the cause
    "one-pass": {"ppo": ("ppo::test_normalize_large_offset[17]", "в один проход"),
                 "boss": ("boss::test_masked_normalize_large_offset[9]", "E[Â²] − E[Â]²")},
    "defaults": {"control": ("control::test_defaults_and_both_flags[{name}-2]", "значения по умолчанию"),
                 "boss": ("boss::test_token_gae_defaults[3]", "значения по умолчанию — как в сигнатуре")},
}
# a right token_gae written another way whose only mistake is its default λ: a list for the pair, keyword-only γ, λ
OTHER_FORM = """
_token_gae = token_gae


def token_gae(rewards, values, mask, *, lam=1.0, gamma=1.0):
    return list(_token_gae(rewards, values, mask, gamma=gamma, lam=lam))
"""


@pytest.mark.parametrize("cause,part,mistake,told", [
    ("one-pass", "ppo", "normalize_one_pass_variance", True),
    ("one-pass", "ppo", "normalize_per_column", False),
    ("one-pass", "boss", "masked_normalize_one_pass", True),
    ("one-pass", "boss", "normalize_per_answer", False),
    ("one-pass", "boss", "normalize_over_padding", False),
    ("defaults", "control", "q_learning_default_gamma", True),
    ("defaults", "control", "q_learning_no_alpha", False),
    ("defaults", "control", "sarsa_both_flags_bootstrap", False),
    ("defaults", "boss", "token_gae_default_lambda", True),
    ("defaults", "boss", "token_gae_default_lambda_other_form", True),
    ("defaults", "boss", "gae_no_lambda", False),
])
def test_a_cause_is_blamed_only_where_it_fits(cause, part, mistake, told, tmp_path):
    path = MUTANTS / HW / part / f"{mistake}.py"
    if mistake.endswith("_other_form"):
        path = tmp_path / HW / part / f"{mistake}.py"
        path.parent.mkdir(parents=True)
        path.write_text(OTHER_FORM, encoding="utf-8")
    _, _, folder = mutant_folder(path, tmp_path)
    check, words = CAUSES[cause][part]
    learner = "sarsa" if mistake.startswith("sarsa") else "q_learning"  # control's mistakes are named after it
    proc = run_check(HW, check.format(name=learner), "--dir", str(folder))
    hints = [line for line in proc.stdout.splitlines() if line.strip().startswith("Подсказка:")]
    assert "✗" in proc.stdout and len(hints) == 1, proc.stdout + proc.stderr  # the check failed, with its hint
    assert (words in hints[0]) == told, proc.stdout  # (a check's title may name the cause too: the hint's line only)
