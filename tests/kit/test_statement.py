"""The task statement (homework/<hw>/README.md) keeps one structure in every part, says what parts.toml says,
and reaches the notebook intact (its collapsible «Как проверяется» blocks included)."""
import re

import nbformat
import pytest

from grader.authoring.build import BuildError
from grader.authoring.notebook_build import build_notebook, check_details, notebook_parts, readme_sections
from grader.base import homeworks
from kit import HW

HOMEWORK = homeworks.load(HW)
README = (HOMEWORK.homework_dir / "README.md").read_text(encoding="utf-8")
INTRO, SECTIONS, GENERAL = readme_sections(README)
SUMMARY = "<details>\n<summary>Как проверяется</summary>\n\n"


def _points(value: float) -> str:
    return f"{value:g}"


@pytest.mark.parametrize("part", [p.id for p in HOMEWORK.parts])
def test_every_part_has_the_same_structure(part):
    """Heading with the points; file, points and check command first; what to implement, examples; the grading
    details last, in one collapsed block that names the time limit of parts.toml."""
    p = HOMEWORK.part(part)
    assert part in SECTIONS, f"README has no section «## Часть `{part}`: ...»"
    text = SECTIONS[part]
    points = f"{_points(p.points)} баллов" + (f" (+{_points(p.bonus_points)} бонус)" if p.bonus_points else "")
    heading, first = text.splitlines()[0], text.split("\n\n")[1]
    assert heading.endswith(f"— {points}"), heading
    assert f"Файл `{p.module}.py` · {points}" in first, first
    assert f"python homework/check.py {HW} {part}" in first and f'check("{part}")' in first, first
    order = [text.index(h) for h in ("\n### Что реализовать\n", "\n### Примеры\n", SUMMARY)]
    assert order == sorted(order), "order: «Что реализовать», «Примеры», «Как проверяется»"
    assert text.count("<details>") == 1 and text.endswith("</details>"), "one «Как проверяется» block, at the end"
    details = text[text.index(SUMMARY):]
    limit = _points(p.timeout)
    assert f"Лимит времени — {limit} с на одну проверку" in details, f"parts.toml: timeout = {limit}"
    check_details(text, part)


def test_common_rules_come_before_the_parts_and_open_the_notebook():
    assert [g.splitlines()[0] for g in GENERAL] == ["## Общие правила"]
    rules = GENERAL[0]
    for module in ("envs.py", "toy_lm.py"):
        assert module in rules  # provided modules are the kit's: an edited copy is not graded
    assert "отдельном процессе" in rules and "print" in rules
    intro = build_notebook(HOMEWORK).cells[0].source
    assert rules in intro and "| часть | что реализовать | баллы |" in intro


def test_notebook_keeps_each_part_text_verbatim():
    nb = nbformat.reads(nbformat.writes(build_notebook(HOMEWORK)), as_version=4)
    cells = {c.id: c.source for c in nb.cells if c.cell_type == "markdown"}
    for part in notebook_parts(HOMEWORK):
        assert cells[f"{part.id}-task"] == SECTIONS[part.id], part.id


@pytest.mark.parametrize("broken", [
    "<details>\n<summary>Как проверяется</summary>\n\n- a\n",  # never closed
    "- a\n\n</details>",  # closed, never opened
    "<details>\n<summary>Как проверяется</summary>\n- a\n\n</details>",  # no blank line after the summary
    "<details>\n\n- a\n\n</details>",  # no summary
    "<details>\n<summary>Как проверяется</summary>\n\n- a\n</details>",  # no blank line before the end
    "<details>\n<summary>A</summary>\n\n<details>\n<summary>B</summary>\n\n- b\n\n</details>\n\n</details>",  # nested
])
def test_a_broken_details_block_stops_the_build(broken):
    with pytest.raises(BuildError):
        check_details("## Часть `x`\n\n" + broken, "x")


def test_readme_commands_name_existing_parts():
    named = set(re.findall(rf"python homework/check\.py {HW} (\w+)", README))
    assert named <= {p.id for p in HOMEWORK.parts}, named
