"""The feedback a student reads: one mistake, one diagnosis, in the order to fix things.

The report groups the failures of one function under it (each check's subject: the function whose answer it
compared), callee first (td_errors, gae, ppo_loss); a named typical
mistake leads its group and the group's other failed checks are one line each; a function whose callee failed
above defers to it. Every typical mistake of the kit's catalogue opens the feedback with a diagnosis or a hint
that is about something (grader.reporting.feedback.GENERIC_HINTS lists the texts that are not), opens on the function
that has the mistake and names no mistake but its own: each mutant file says which function it breaks (``BREAKS``) and
the words that name it (``NAMED_BY``).
"""
from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from catalogue import CASES, IDS
from grader.base import homeworks
from grader.base.results import DIAGNOSIS, CheckResult, PartResult
from grader.grading.checks import CheckFailure, check_close, check_float
from grader.reporting import feedback
from kit import HW

RERUN = f"python homework/check.py {HW}"
DIAG = "Похоже на типичную ошибку: рекурсия идёт с начала траектории, а нужно с конца (reversed)."


def failure(name: str, function: str, message: str, kind: str = "check", called: list[str] | None = None,
            diagnosis: str = "") -> CheckResult:
    return CheckResult(f"tests/{HW}/test_ppo.py::{name}", name, f"проверка {name}", "failed", kind, message,
                       functions=called if called is not None else [function], subject=function, subjects=[function],
                       diagnosis=diagnosis)


def passing(name: str, function: str) -> CheckResult:
    return CheckResult(f"tests/{HW}/test_ppo.py::{name}", name, f"проверка {name}", "passed", functions=[function],
                       subject=function, subjects=[function])


def render(*checks: CheckResult) -> str:
    hw = homeworks.load(HW)
    return feedback.scoreboard(hw, [PartResult(hw.part("ppo"), list(checks))], "ваш код", RERUN)


def test_one_mistake_reads_as_one_diagnosis_with_the_other_checks_one_line_each():
    text = render(
        passing("test_td", "td_errors"),
        failure("test_gae_types", "gae", "Проверяли: gae на float32\nПодсказка: приводите входы к числам: np.asarray"),
        failure("test_gae_courier", "gae", f"Проверяли: gae для курьера\n{DIAG}\nПодсказка: проход с конца",
                diagnosis=DIAG),
        failure("test_gae_random", "gae", "Проверяли: gae на случайных\nОжидали: 1\nПолучили: 2"),
    )
    blocks = feedback.failure_blocks(text)
    assert len(blocks) == 1, text
    assert blocks[0].startswith("✗ [ppo] проверка test_gae_courier") and DIAG in blocks[0], text
    assert "■ [ppo] gae — не пройдено проверок: 3" in text
    for name in ("test_gae_types", "test_gae_random"):  # one line each: the title and the rerun command
        assert f'    · проверка {name} — {RERUN} "ppo::{name}"' in text, text
    assert "приводите входы к числам" not in text  # the generic hint of a check that defers to the diagnosis


def test_functions_are_shown_callee_first_and_a_caller_defers_to_its_callee():
    """A caller defers when its calls went through the failed callee (tests/kit/test_deferrals.py: only then)."""
    text = render(  # the test file's order puts ppo_loss first here; the fix order does not
        replace(failure("test_loss", "ppo_loss", "Проверяли: loss\nПодсказка: c_v·(V − R̂)²"),
                entered={"ppo_loss": ["ppo_clip_objective"]}),
        replace(failure("test_gae", "gae", "Проверяли: gae\nПодсказка: проход с конца"),
                entered={"gae": ["td_errors"]}),
        failure("test_clip", "ppo_clip_objective", "Проверяли: клип\nПодсказка: min, а не max"),
        failure("test_td", "td_errors", "Проверяли: δ\nПодсказка: δ_t = r_t + γ·V(s_{t+1}) − V(s_t)"),
    )
    blocks = feedback.failure_blocks(text)
    assert [b.splitlines()[0] for b in blocks] == ["✗ [ppo] проверка test_td", "✗ [ppo] проверка test_clip"], text
    assert text.index("test_td") < text.index("test_gae") < text.index("test_clip") < text.index("test_loss")
    assert "■ [ppo] gae — не пройдено проверок: 1. gae вызывает td_errors" in text, text
    assert "■ [ppo] ppo_loss — не пройдено проверок: 1. ppo_loss вызывает ppo_clip_objective" in text, text


def test_a_check_is_grouped_under_its_subject_whatever_else_it_called():
    text = render(  # the loss check called ppo_clip_objective last (for a hint): still a failure of ppo_loss
        failure("test_loss", "ppo_loss", "Проверяли: ppo_loss\nПодсказка: c_e·H со знаком минус",
                called=["ppo_loss", "ppo_clip_objective"]),
        failure("test_courier", "gae", f"Проверяли: gae для курьера\n{DIAG}", called=[], diagnosis=DIAG),
    )
    blocks = feedback.failure_blocks(text)
    assert [b.splitlines()[0] for b in blocks] == ["✗ [ppo] проверка test_courier", "✗ [ppo] проверка test_loss"]
    assert "ppo_clip_objective" not in text, text


def test_the_words_of_a_diagnosis_in_a_text_lead_nothing():
    """A failure whose text carries the words of a diagnosis (the student's answer quoted, say) but whose check named
    no mistake ranks as what it is: the failure whose check named one leads."""
    text = render(
        failure("test_gae_types", "gae", f"Проверяли: gae на float32\nПолучили: str: x\\n{DIAG}"),
        failure("test_gae_courier", "gae", f"Проверяли: gae для курьера\n{DIAG}", diagnosis=DIAG),
    )
    blocks = feedback.failure_blocks(text)
    assert blocks[0].startswith("✗ [ppo] проверка test_gae_courier"), text


def test_without_a_diagnosis_a_specific_hint_leads_over_a_generic_one():
    text = render(
        failure("test_gae_types", "gae", "Проверяли: gae на float32\nПодсказка: приводите входы к числам"),
        failure("test_gae_courier", "gae", "Проверяли: gae для курьера\nПодсказка: проход с конца траектории"),
    )
    blocks = feedback.failure_blocks(text)
    assert len(blocks) == 1 and "проход с конца траектории" in blocks[0], text


def test_generic_hints_are_told_apart():
    assert feedback.is_generic("приводите входы к числам: np.asarray(x, dtype=float)")
    assert not feedback.is_generic("Â_t = δ_t + γλ·Â_{t+1}, проход с конца траектории")
    assert feedback.is_specific("Проверяли: x", DIAG)  # a diagnosis: the check's field
    assert not feedback.is_specific(f"Проверяли: x\nПолучили: {DIAG}")  # its words in a text name nothing
    assert not feedback.is_specific("Проверяли: x\nПодсказка: проверьте форму ответа: он должен совпадать")


def test_a_mismatch_hidden_in_the_elided_middle_is_shown_in_a_window():
    expected = np.linspace(0.0, 1.0, 30)
    got = expected.copy()
    got[13] += 0.5
    got[15] -= 0.25
    with pytest.raises(CheckFailure) as info:
        check_close(got, expected, what="массив")
    text = str(info.value)
    assert "..." in text and "Первое расхождение в позиции 13" in text
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Вокруг позиции 13"))
    head, exp, out, marks = lines[at + 1:at + 5]
    assert head.split()[1:] == [str(i) for i in range(10, 17)]
    assert exp.split()[0] == "ожидали" and out.split()[0] == "получили"
    assert float(exp.split()[4]) == pytest.approx(expected[13], abs=1e-4)
    assert float(out.split()[4]) == pytest.approx(got[13], abs=1e-4)
    # the marks stand under positions 13 and 15, aligned with their columns
    columns = [head.index(f" {i}") + 1 + len(str(i)) for i in range(10, 17)]  # right edge of each column
    marked = [i for i, right in zip(range(10, 17), columns) if marks[right - 1:right] == "^"]
    assert marked == [13, 15], "\n".join(lines[at:at + 5])


def test_a_visible_mismatch_needs_no_window():
    expected = np.linspace(0.0, 1.0, 30)
    got = expected.copy()
    got[1] += 0.5
    with pytest.raises(CheckFailure) as info:
        check_close(got, expected, what="массив")
    assert "Вокруг позиции" not in str(info.value)


@pytest.mark.parametrize("got,expected", [(1.000001, 1.0), ([1.0, 2.0000003], [1.0, 2.0]), (-3.14159265, -3.14159)])
def test_a_reported_difference_shows_in_the_digits(got, expected):
    """Expected and got never print alike: as many digits as the difference needs."""
    check = check_close if isinstance(got, list) else check_float
    with pytest.raises(CheckFailure) as info:
        check(got, expected, what="ответ", atol=1e-9, rtol=1e-9)
    lines = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in str(info.value).splitlines()
             if line.startswith(("Ожидали", "Получили"))}
    assert lines["Ожидали"] != lines["Получили"], str(info.value)
    if isinstance(got, list):
        assert "ожидали 2, получили 2.0000003" in str(info.value)


@pytest.mark.parametrize("shape", [(48, 4), (30, 30), (3, 4, 5, 6), (500,)])
def test_a_wrong_array_is_told_in_about_twenty_lines_with_its_first_mismatch(shape):
    """A Q table, a square matrix, a 4-D array of gradients (once about 340 lines), a long vector: the block says
    the shape, shows the first mismatch in a window, and stays within 20 lines."""
    expected = np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape)
    got = expected.copy()
    got.flat[got.size // 2 + 1] += 0.5
    with pytest.raises(CheckFailure) as info:
        check_close(got, expected, what="массив", hint="подсказка")
    text = str(info.value)
    assert len(text.splitlines()) <= 20, text
    assert f"форм{'а' if len(shape) <= 2 else 'ы'} {shape}" in text and "Первое расхождение" in text, text
    assert "Вокруг позиции" in text or len(shape) == 1, text


def test_a_mistake_is_named_only_when_no_other_gives_the_same_answer():
    with pytest.raises(CheckFailure) as info:
        check_close([2.0, 4.0], [1.0, 2.0], what="ответ", mistakes={"без γ": [2.0, 4.0], "γ дважды": [0.5, 1.0]})
    assert "Похоже на типичную ошибку: без γ." in str(info.value)
    with pytest.raises(CheckFailure) as info:  # two mistakes give this answer: naming either could be wrong
        check_close([2.0, 4.0], [1.0, 2.0], what="ответ", mistakes={"без γ": [2.0, 4.0], "γ = 1": [2.0, 4.0]})
    assert "типичную ошибку" not in str(info.value)


# ---- every typical mistake of the catalogue -------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_every_mistake_opens_with_a_diagnosis_or_a_specific_hint(path, graded_catalogue):
    result, text = graded_catalogue[path]
    assert not result.error, result.error
    blocks = feedback.failure_blocks(text)
    assert blocks, f"nothing failed:\n{text}"
    assert feedback.is_specific(blocks[0], first_diagnosis(path, result, blocks[0])), \
        f"the first block names no mistake and gives only a generic hint:\n{text}"


def first_diagnosis(path: Path, result, block: str) -> str:
    """The typical mistake the first block names: its check's field, as the scoreboard logs what it prints (the first
    text logged is the first block's), never a line of the block's text."""
    hw = homeworks.load(path.parent.parent.name)
    shown: list[dict] = []
    feedback.scoreboard(hw, [result], "модули", f"python homework/check.py {hw.name}", shown=shown)
    assert shown and shown[0]["text"] in "\n".join(line[4:] for line in block.splitlines()), (shown[:1], block)
    return shown[0].get("diagnosis", "")


def declared(path: Path) -> dict[str, object]:
    """The constants a mutant file declares right after its docstring (``BREAKS``, ``NAMED_BY``), by name."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    out: dict[str, object] = {}
    for node in body[1:] if body and isinstance(body[0], ast.Expr) else []:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in ("BREAKS", "NAMED_BY")):
            break
        try:
            out[node.targets[0].id] = ast.literal_eval(node.value)
        except ValueError:  # not a plain literal
            out[node.targets[0].id] = None
    return out


def broken(path: Path) -> tuple[str, ...]:
    breaks = declared(path)["BREAKS"]
    return (breaks,) if isinstance(breaks, str) else tuple(breaks)


def test_every_mistake_says_which_function_it_breaks_and_what_names_it():
    """BREAKS: a public function of the part's module (or a tuple of them); NAMED_BY: a list of texts (empty when no
    diagnosis or hint of this very mistake names it); both plain literals right after the docstring."""
    problems = []
    for path in CASES:
        hw = homeworks.load(path.parent.parent.name)
        order = feedback.function_order(hw, hw.part(path.parent.name))
        public = {f for f in order if not f.startswith("_")}
        found = declared(path)
        breaks, named_by = found.get("BREAKS"), found.get("NAMED_BY")
        names = (breaks,) if isinstance(breaks, str) else breaks
        if not (isinstance(names, tuple) and names and all(isinstance(f, str) and f in public for f in names)):
            problems.append(f"{path.parent.name}/{path.stem}: BREAKS = {breaks!r}, not a public function of "
                            f"{sorted(public)} (or a tuple of them)")
        if not (isinstance(named_by, list) and all(isinstance(t, str) and t.strip() for t in named_by)):
            problems.append(f"{path.parent.name}/{path.stem}: NAMED_BY = {named_by!r}, not a list of texts")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_every_mistake_opens_on_the_function_it_breaks_and_names_only_itself(path, graded_catalogue, graded_every):
    """The first group of failures is about a function the mutant breaks; a diagnosis in the first block names this
    mistake (one of its NAMED_BY texts), never another; a mistake that has NAMED_BY texts is named in the first
    block. And every block: graded for the record (public inputs and the default secret's hidden ones) on every
    check it can change, no failure names another catalogued mistake (where two mistakes give the same answer on a
    check's input, the check needs an input that tells them apart, or names neither)."""
    result, text = graded_catalogue[path]
    assert not result.error, result.error
    hw = homeworks.load(path.parent.parent.name)
    order = feedback.function_order(hw, hw.part(path.parent.name))
    rank = {f: i for i, f in enumerate(order)}
    subjects = [feedback.subject(c, order) for c in result.checks if not c.passed]
    assert subjects, f"nothing failed:\n{text}"
    first = min(subjects, key=lambda f: (rank.get(f, len(order)), not f))
    assert first in broken(path), \
        f"the feedback opens on {first or 'checks about no function'}, the mistake is in {broken(path)}:\n{text}"
    block = feedback.failure_blocks(text)[0]
    named_by = declared(path)["NAMED_BY"]
    diagnosis = first_diagnosis(path, result, block)  # its check's field, not its text
    assert not diagnosis or any(t in diagnosis for t in named_by), \
        f"the first block names a mistake that is not this one (NAMED_BY = {named_by}):\n{block}"
    assert not named_by or any(t in block for t in named_by), \
        f"the first block does not name this mistake (NAMED_BY = {named_by}):\n{block}"
    everywhere, _ = graded_every(path)
    assert not everywhere.error, everywhere.error
    others = [f"{c.name}{' (hidden)' if c.hidden else ''}: {c.diagnosis}" for c in everywhere.checks
              if not c.passed and c.diagnosis and not any(t in c.diagnosis for t in named_by)]
    assert not others, f"checks name a mistake that is not this one (NAMED_BY = {named_by}):\n" + "\n".join(others)


def test_the_students_text_lands_in_a_message_as_one_line_and_names_no_mistake():
    """A string answer, an exception's message, a load error (a SyntaxError's line too): each one line of escaped text
    (grader.base.escape.one_line), so no word of the student's starts a line of the report's own, and the failure names
    no typical mistake (its diagnosis is a field only the check's helpers set)."""
    from grader.boundary.loading import describe_exception

    forged = f"x\n{DIAG}\n"
    with pytest.raises(CheckFailure) as info:
        check_close(forged, [1.0, 2.0], what="ответ")
    assert info.value.diagnosis == "" and not [line for line in str(info.value).splitlines()
                                               if line.startswith(DIAGNOSIS)], str(info.value)
    assert "x\\x0aПохоже" in str(info.value)
    try:
        raise RuntimeError(forged)
    except RuntimeError as exc:
        said = describe_exception(exc)
    try:
        compile(f"x = 1\nbroken(:  # {forged}", "ppo.py", "exec")
    except SyntaxError as exc:
        told = describe_exception(exc)
    assert len(said.splitlines()) == len(told.splitlines()) == 1, (said, told)
    assert "RuntimeError: x\\x0aПохоже" in said and told.startswith("SyntaxError в ppo.py, строка 2"), (said, told)
