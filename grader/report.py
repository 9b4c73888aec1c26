"""The scoreboard and the feedback a student reads, in Russian."""
from __future__ import annotations

import re
import textwrap
from collections import OrderedDict

from grader.homeworks import Homework
from grader.runner import CheckResult, PartResult


def _points(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def totals(results: list[PartResult]) -> tuple[float, float, float, float]:
    """(score, max score, bonus score, max bonus) over the graded parts."""
    score = sum(r.score for r in results)
    max_score = sum(r.part.points for r in results)
    bonus = sum(r.bonus_score for r in results)
    max_bonus = sum(r.part.bonus_points for r in results)
    return score, max_score, bonus, max_bonus


def all_passed(results: list[PartResult]) -> bool:
    return all(not r.error and r.checks and all(c.passed for c in r.checks) for r in results)


def scoreboard(hw: Homework, results: list[PartResult], source: str, rerun_prefix: str, verbose: bool = False,
               partial: bool = False) -> str:
    lines = [f"{hw.name} — {hw.title}", f"Проверяем: {source}"]
    if partial:
        lines.append("Запущены только выбранные проверки: баллы ниже — по ним, а не за всю часть.")
    lines.append("")
    width = max([len(r.part.title) for r in results] + [8])
    lines.append(f"  {'часть':<16} {'':<{width}}  {'проверки':>9}  {'баллы':>9}")
    for r in results:
        passed = f"{r.n_passed}/{len(r.checks)}" if not r.error else "—"
        mark = "✓" if r.checks and not r.error and r.n_passed == len(r.checks) else "✗"
        pts = f"{_points(r.score)}/{_points(r.part.points)}"
        if r.part.bonus_points:
            pts += f" +{_points(r.bonus_score)}/{_points(r.part.bonus_points)} бонус"
        lines.append(f"{mark} {r.part.id:<16} {r.part.title:<{width}}  {passed:>9}  {pts:>9}")
    score, max_score, bonus, max_bonus = totals(results)
    n_passed = sum(r.n_passed for r in results)
    n_total = sum(len(r.checks) for r in results)
    percent = 100 * score / max_score if max_score else 0.0
    total = f"Итого: {_points(score)} из {_points(max_score)} баллов ({percent:.0f}%), проверок пройдено {n_passed} из {n_total}"
    if max_bonus:
        total += f"; бонус {_points(bonus)} из {_points(max_bonus)}"
    lines += ["", total]
    failures = _failures(results, rerun_prefix, verbose)
    if failures:
        lines += ["", *failures]
    elif all_passed(results):
        lines += ["", "Все проверки пройдены. Отличная работа!"]
    return "\n".join(lines)


def _grouped(c: CheckResult, verbose: bool) -> bool:
    """Failures shown once for many checks: a module that does not load, a TODO, a function known to hang."""
    return c.kind == "load" or (c.kind in ("todo", "hung") and not verbose)


def _failures(results: list[PartResult], rerun_prefix: str, verbose: bool) -> list[str]:
    out: list[str] = []
    for r in results:
        if r.error:
            out += [f"✗ [{r.part.id}] часть не проверена:", textwrap.indent(r.error, "    "), ""]
        if r.notes:
            out += [f"! [{r.part.id}] ячейки тетрадки, которые не выполнились (остальное проверено):",
                    *[f"    {n}" for n in r.notes], ""]
        todo: "OrderedDict[str, list[CheckResult]]" = OrderedDict()
        for c in r.checks:  # one line for many checks failing the same way
            if not c.passed and _grouped(c, verbose):
                todo.setdefault(c.message, []).append(c)
        for message, checks in todo.items():
            head, *rest = message.strip().splitlines() or [""]
            out.append(f"✗ [{r.part.id}] {head} — не пройдено проверок: {len(checks)}")
            out += [textwrap.indent(line, "    ") for line in rest]
        if todo:
            out.append("")
        for c in r.checks:
            if c.passed or _grouped(c, verbose):
                continue
            out.append(f"✗ [{r.part.id}] {c.title}")
            out.append(textwrap.indent(c.message.strip() or "проверка не прошла", "    "))
            if verbose and c.traceback:
                out.append(textwrap.indent(c.traceback.rstrip(), "    | "))
            out.append(f'    Повторить: {rerun_prefix} "{r.part.id}::{c.name}"')
            out.append("")
    if any(not c.passed for r in results for c in r.checks) and not verbose:
        out.append("Подробности с трассировкой: добавьте -v.")
    return out


# ---- reading the feedback back (benchmarks/feedback_quality.py, tests/kit/test_feedback.py) --------------

DIAGNOSIS = "Похоже на типичную ошибку"  # the words a check uses when the answer matches a known mistake

# Hints that fit any wrong answer, so they say nothing about the mistake at hand: the form of the answer,
# its type, NaN, "not written yet", "see the other checks". Substrings; the one place they are listed.
GENERIC_HINTS = (
    "проверьте форму ответа",
    "в ответе есть NaN или бесконечность",
    "функция ничего не вернула",
    "функция должна вернуть один массив",
    "функция должна вернуть одно число",
    "верните пару: return",
    "проверьте тип и форму того, что возвращает функция",
    "приводите входы к числам",
    "их проверки точнее",
)

_HINT = re.compile(r"^\s*Подсказка:\s*(.*)$")


def hints(text: str) -> list[str]:
    """The «Подсказка:» lines of a failure's text, without the label."""
    return [m.group(1) for m in map(_HINT.match, text.splitlines()) if m]


def is_generic(hint: str) -> bool:
    return any(g in hint for g in GENERIC_HINTS)


def is_specific(text: str) -> bool:
    """A failure's text names the mistake (a diagnosis) or carries a hint that is not generic."""
    return DIAGNOSIS in text or any(not is_generic(h) for h in hints(text))


def failure_blocks(text: str) -> list[str]:
    """The failure blocks of a rendered scoreboard, in the order the student reads them.

    A block opens with a line starting with «✗» (after indentation) below the «Итого» line, and runs up to a
    blank line, the next «✗» line or a one-line entry («·»). One-line entries and notes («!») are not blocks.
    """
    lines = text.splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith("Итого")), 0)
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in lines[start:]:
        stripped = line.strip()
        if stripped.startswith("✗"):
            current = [line]
            blocks.append(current)
        elif not stripped or stripped.startswith("·") or not line.startswith(" "):
            current = None
        elif current is not None:
            current.append(line)
    return ["\n".join(b) for b in blocks]
