"""The scoreboard and the feedback a student reads, in Russian."""
from __future__ import annotations

import ast
import functools
import re
import textwrap
from collections import OrderedDict
from typing import Collection, Mapping

from grader.base.homeworks import ROOT, Homework
from grader.base.results import CheckResult, PartResult, Totals
from grader.base.told import deferring, told


def _points(x: float, digits: int = 1) -> str:
    return f"{x:.{digits}f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def required_passed(results: list[PartResult]) -> bool:
    """Every part graded and every check it requires passed: the run succeeds (exit 0), whatever its bonus."""
    return all(not r.error and r.checks and all(c.passed for c in r.checks if not c.bonus) for r in results)


def all_passed(results: list[PartResult]) -> bool:
    return required_passed(results) and all(c.passed for r in results for c in r.checks)


# where -v has something to show: the call that gave a wrong answer, the traceback of an error in the student's code
VERBOSE_NOTE = "Подробности (вызов с неверным ответом, трассировка ошибки): добавьте -v."


def scoreboard(hw: Homework, results: list[PartResult], source: str, rerun_prefix: str, verbose: bool = False,
               partial: bool | Collection[str] = False, whole: Mapping[str, list[dict]] | None = None,
               files: str | None = None, first_run: bool = True, reference: bool = False,
               shown: list[dict] | None = None, totals: Totals | None = None) -> str:
    """The scoreboard and the feedback, as the student reads it.

    ``partial``: True, or the ids of the parts of which only some checks ran (``part::test_x``): their rows show
    the checks run and what those are worth, never the part's score. ``whole``: part id -> every check of that
    part (``{"name", "weight", "bonus"}``), to say what the checks run are worth; without it the points of a
    partial part are not shown. ``files``: the folder of the graded modules as the student names it
    (``homework/<hw>``; None for a notebook), for the first run's preface. ``first_run``: False for a grade for
    the record (a batch's feedback), where 0 is a grade, not the normal start of the work. ``reference``: the
    kit's own solutions, graded by an instructor (no praise, nobody's "your code"). ``totals``: those of
    ``results``, computed once by the caller (else here); the total line counts only the parts run whole.
    """
    part_ids = {r.part.id for r in results}
    partial_ids = set(part_ids if partial is True else (partial or ()))
    full = [r for r in results if r.part.id not in partial_ids]
    part_runs = [r for r in results if r.part.id in partial_ids]
    lines = _heading(hw, results, source, rerun_prefix, files, first_run, full, part_runs)
    worth = {r.part.id: _worth(r, (whole or {}).get(r.part.id)) for r in part_runs}
    lines += ["", *_table(results, partial_ids, worth, whole), ""]
    if full:
        lines.append(_total(full, totals if totals is not None and not part_runs else Totals.of(full)))
    if part_runs:
        lines.append(_selected_total(part_runs, worth, bool(full)))
    lines += _inputs(results) + _how_run(results, reference)
    return "\n".join(lines + _verdict(hw, results, rerun_prefix, verbose, shown, part_runs, reference))


def _heading(hw: Homework, results: list[PartResult], source: str, rerun_prefix: str, files: str | None,
             first_run: bool, full: list[PartResult], part_runs: list[PartResult]) -> list[str]:
    """What is graded; on the first run (untouched stubs) where to start; for checks selected, that their points are
    no grade for the part."""
    lines = [f"{hw.name} — {hw.title}", f"Проверяем: {source}"]
    if first_run and not part_runs and _untouched(results):
        lines += _first_run(hw, results, rerun_prefix, files)
    if part_runs:
        which = "" if not full else f" (часть {', '.join(r.part.id for r in part_runs)})"
        lines.append(f"Запущены только выбранные проверки{which}: баллы ниже — только за них, "
                     "оценки за часть здесь нет.")
    return lines


def _how_run(results: list[PartResult], reference: bool) -> list[str]:
    """How the code ran: its confinement, and lines in the results channel without the grader's signature."""
    lines = []
    levels = sorted({r.confinement for r in results if r.confinement})
    if levels:
        lines.append(f"{'Код' if reference else 'Ваш код'} выполнялся в отдельном процессе ({'; '.join(levels)}).")
    forged = max((r.forged for r in results), default=0)  # parts graded together share one channel
    if forged:
        lines.append(f"! В канал результатов проверки попали чужие строки ({forged}): они не учтены.")
    return lines


def _verdict(hw: Homework, results: list[PartResult], rerun_prefix: str, verbose: bool, shown: list[dict] | None,
             part_runs: list[PartResult], reference: bool) -> list[str]:
    """The failures, grouped by the function to fix (and a word when only the bonus is missing), or the praise."""
    failures = _failures(hw, results, rerun_prefix, verbose, shown)
    if failures:
        if required_passed(results) and not part_runs:
            return ["", *failures,
                    "Все обязательные проверки пройдены: оценка полная, не хватает только бонуса (он сверх 100%)."]
        return ["", *failures]
    if not all_passed(results):
        return []
    if part_runs:
        return ["", "Выбранные проверки пройдены. Оценка за часть — после всех её проверок: "
                + ", ".join(f'{rerun_prefix} "{r.part.id}"' for r in part_runs)]
    return ["", "Эталонные решения проходят все проверки." if reference else "Все проверки пройдены. Отличная работа!"]


def _table(results: list[PartResult], partial_ids: set[str], worth: dict, whole) -> list[str]:
    """One row per part: checks passed and points (for a part run in part: the checks run and their worth)."""
    width = max([len(r.part.title) for r in results] + [8])
    rows = [f"  {'часть':<16} {'':<{width}}  {'проверки':>11}  {'баллы':>9}"]
    for r in results:
        mark = "✓" if required_passed([r]) else "✗"  # a missing bonus shows in the points
        if r.part.id in partial_ids:
            total = len((whole or {}).get(r.part.id) or [])
            passed = f"{r.n_passed}/{len(r.checks)}" + (f" из {total}" if total else "")
            got, out_of = worth[r.part.id]
            pts = f"{_points(got, 2)}/{_points(out_of, 2)}" if out_of is not None else "—"
        else:
            passed = f"{r.n_passed}/{len(r.checks)}" if not r.error else "—"
            pts = f"{_points(r.score, 2)}/{_points(r.part.points)}"
            if r.part.bonus_points:
                pts += f" +{_points(r.bonus_score, 2)}/{_points(r.part.bonus_points)} бонус"
        rows.append(f"{mark} {r.part.id:<16} {r.part.title:<{width}}  {passed:>11}  {pts:>9}")
    return rows


SELF_CHECK = ("Это самопроверка на открытых входах — тех, что есть в вашей копии. Оценку за работу выставляют "
              "отдельно: все проверки запускаются ещё раз и на других входах того же вида, которых в копии нет.")


def _inputs(results: list[PartResult]) -> list[str]:
    """What the total is: a self-check on public inputs (and which checks run only in the grade), or the grade."""
    if any(r.inputs != "public" for r in results):
        secrets = sorted({r.secret for r in results if r.secret})
        return [f"Оценка на открытых и скрытых входах (секрет {', '.join(secrets)}; версия проверок "
                f"{', '.join(sorted({r.kit for r in results if r.kit}))})."]
    lines = [SELF_CHECK]
    for r in results:
        if r.grade_only:
            first = {}  # one title per check function: its cases differ only in their parameters
            for c in r.grade_only:
                first.setdefault(str(c.get("name", "")).split("[")[0], str(c.get("title", c.get("name", ""))))
            lines.append(f"  [{r.part.id}] проверок только при выставлении оценки: {len(r.grade_only)} (их ответ — "
                         "повтор того, что делал ваш код, и в копии его нет): "
                         + "; ".join(f"«{t}»" for t in first.values()))
    kit = sorted({r.kit for r in results if r.kit})
    if kit:
        lines.append(f"Версия проверок: {', '.join(kit)} (если преподаватель обновил набор, обновите копию).")
    return lines


def _total(full: list[PartResult], totals: Totals) -> str:
    score, max_score, bonus, max_bonus = totals.score, totals.max_score, totals.bonus, totals.max_bonus
    n_passed, n_total = totals.passed, totals.checks
    percent = 100 * score / max_score if max_score else 0.0
    label = "Итого" if any(r.inputs != "public" for r in full) else "Итого самопроверки"
    total = (f"{label}: {_points(score, 2)} из {_points(max_score)} баллов ({percent:.0f}%), "
             f"проверок пройдено {n_passed} из {n_total}")
    if max_bonus:
        total += f"; бонус {_points(bonus, 2)} из {_points(max_bonus)}"
    return total


def _selected_total(part_runs: list[PartResult], worth: dict, with_full: bool) -> str:
    n_passed = sum(r.n_passed for r in part_runs)
    n_total = sum(len(r.checks) for r in part_runs)
    known = [worth[r.part.id] for r in part_runs if worth[r.part.id][1] is not None]
    which = "" if not with_full else f" ({', '.join(r.part.id for r in part_runs)})"
    text = f"Выбранные проверки{which}: пройдено {n_passed} из {n_total}"
    if known and len(known) == len(part_runs):
        text += (f", {_points(sum(g for g, _ in known), 2)} из {_points(sum(t for _, t in known), 2)} балла "
                 "(не оценка за часть)")
    return text


def _worth(r: PartResult, every: list[dict] | None) -> tuple[float, float | None]:
    """(points of the passed checks, points of the checks run) of a part run in part; None when unknown."""
    if not every:
        return 0.0, None
    weights = {c["name"]: (float(c.get("weight", 1.0)), bool(c.get("bonus", False))) for c in every}
    pool = {b: sum(w for w, bb in weights.values() if bb == b) for b in (False, True)}
    got = out_of = 0.0
    for c in r.checks:
        if c.name not in weights:
            return 0.0, None
        w, bonus = weights[c.name]
        value = (r.part.bonus_points if bonus else r.part.points) * w / pool[bonus] if pool[bonus] else 0.0
        out_of += value
        got += value if c.passed else 0.0
    return got, out_of


# ---- the first run: untouched stubs --------------------------------------------------------------------

def _untouched(results: list[PartResult]) -> bool:
    """Nothing written yet: every check of every part fails as "not implemented"."""
    return bool(results) and all(not r.error and r.checks and all(c.kind == "todo" for c in r.checks)
                                 for r in results)


def _first_run(hw: Homework, results: list[PartResult], rerun_prefix: str, files: str | None) -> list[str]:
    first = results[0].part
    max_score = sum(r.part.points for r in results)
    lines = ["", f"Начало работы: функции ещё не написаны (везде TODO), поэтому 0 из {_points(max_score)} — "
                 "нормальный старт, а не ошибка."]
    statement = hw.homework_dir / "README.md"
    if statement.is_file():
        lines.append(f"  Условие: {statement.relative_to(ROOT).as_posix()}")
    if files is not None:
        lines.append(f"  Начните с части {first.id} («{first.title}»):")
        lines.append(f"  допишите функции с # TODO в файле {files.rstrip('/')}/{first.module}.py")
        lines.append(f"  и проверяйте только эту часть: {rerun_prefix} {first.id}")
    else:
        lines.append(f"  Начните с части {first.id} («{first.title}»): допишите её функции с # TODO.")
    return lines


# ---- the failures, grouped by the function to fix --------------------------------------------------------

_TODO = re.compile(r"не реализовано \(TODO\): (\w+)")


def _grouped(c: CheckResult) -> bool:
    """Failures shown as one line for many checks: a module that does not load, a TODO."""
    return c.kind in ("load", "todo")


def _failures(hw: Homework, results: list[PartResult], rerun_prefix: str, verbose: bool,
              shown_log: list[dict] | None = None) -> list[str]:
    """The failure blocks, grouped by the function to fix; ``shown_log`` gets each text printed in full (its part,
    function, check, title and the text itself, as printed): what the student read, and so what a class report may
    say the student was told."""
    log = shown_log if shown_log is not None else []
    out: list[str] = []
    real = False  # a failure other than a TODO: -v has something to show
    for r in results:
        out += _part_trouble(r)
        failed = [c for c in r.checks if not c.passed]
        if failed and len(failed) == len(r.checks) and all(_TODO.fullmatch(c.message.strip()) for c in failed):
            out += _todo(r.part.id, failed, verbose)
            continue
        out += _one_line_per_message(r.part.id, [c for c in failed if c.kind == "load"], verbose, log)
        groups, explained = _function_groups(hw, r, [c for c in failed if c.kind != "load"], rerun_prefix,
                                             verbose, log, bool(out and out[-1]))
        out += groups
        real = real or explained
        if out and out[-1]:
            out.append("")
    if real and not verbose:
        out += ["" if out and out[-1] else None, VERBOSE_NOTE]
    out = [line for line in out if line is not None]
    while out and not out[-1]:
        out.pop()
    return out


def _part_trouble(r: PartResult) -> list[str]:
    """A part that could not be graded, and a notebook's cells that did not run."""
    out: list[str] = []
    if r.error:
        out += [f"✗ [{r.part.id}] часть не проверена:", textwrap.indent(r.error, "    "), ""]
    if r.notes:
        out += [f"! [{r.part.id}] ячейки тетрадки, которые не выполнились (остальное проверено):",
                *[f"    {n}" for n in r.notes], ""]
    return out


def _todo(part_id: str, failed: list[CheckResult], verbose: bool) -> list[str]:
    """A part whose every check fails as not implemented: one line naming its functions (with -v, one traceback
    per function)."""
    names = list(OrderedDict.fromkeys(_TODO.fullmatch(c.message.strip()).group(1) for c in failed))
    out = [f"✗ [{part_id}] не реализовано (TODO): {', '.join(names)} — не пройдено проверок: {len(failed)}"]
    if verbose:
        for name in names:
            c = next(c for c in failed if _TODO.fullmatch(c.message.strip()).group(1) == name)
            out += [f"    {name}:", _bar(_last_frame(c.traceback))]
    return out


def _function_groups(hw: Homework, r: PartResult, failed: list[CheckResult], rerun_prefix: str, verbose: bool,
                     log: list[dict], after_text: bool) -> tuple[list[str], bool]:
    """A part's failed checks (of a module that loaded), one group per function, in the order to fix them; and
    whether one failed otherwise than as a TODO or a module not loaded (so -v has something to show).
    ``after_text``: the lines before these end with text (a group opens after an empty line)."""
    order = function_order(hw, r.part)
    groups = _by_function(failed, order)
    rank = {f: i for i, f in enumerate(order)}
    shown: dict[str, CheckResult | None] = {}  # function whose failures are above -> the check shown in full
    above: list[CheckResult] = []  # the failed checks shown above
    again = functools.partial(_rerun, rerun_prefix, r.part.id)
    out: list[str] = []
    explained = False
    for func in sorted(groups, key=lambda f: (rank.get(f, len(order)), not f)):
        checks = [told(c, above, groups[func], again) for c in groups[func]]
        above += groups[func]
        out += _one_line_per_message(r.part.id, [c for c in checks if _grouped(c)], verbose, log)
        rest = [c for c in checks if not _grouped(c)]
        lead = None
        if rest:
            explained = True
            before = _fix_first(func, rest, shown, rank)
            if bool(out[-1]) if out else after_text:
                out.append("")
            lead = None if before else _lead(rest)
            out += _function_group(r.part.id, func, rest, [(g, shown[g]) for g in before], rerun_prefix,
                                   verbose, log)
        shown[func] = lead
    return out, explained


def _fix_first(func: str, checks: list[CheckResult], shown: dict, rank: dict[str, int]) -> list[str]:
    """The functions whose failures are above (``shown``) that ``func``'s own code went through in these checks, in
    the order to fix them; for checks not traced to a function, every function above."""
    if not func and shown:
        return sorted(shown, key=lambda f: rank.get(f, 0))
    went = {g for c in checks for g in c.entered.get(func, ())}
    return [g for g in sorted(shown, key=lambda f: rank.get(f, 0)) if g in went]


def _bar(traceback: str) -> str:
    return textwrap.indent(traceback, "    | ", lambda line: True)


def _by_function(failed: list[CheckResult], order: list[str]) -> "OrderedDict[str, list[CheckResult]]":
    """The failed checks grouped by the function each is about (:func:`subject`), in the test file's order within a
    group."""
    groups: "OrderedDict[str, list[CheckResult]]" = OrderedDict()
    for c in failed:
        groups.setdefault(subject(c, order), []).append(c)
    return groups


def _last_frame(traceback: str) -> str:
    """The last section of a pytest traceback: where the student's code raised (for a TODO, its stub)."""
    sections = re.split(r"\n(?:_ )+_\s*\n", traceback.rstrip())
    return sections[-1].strip("\n")


def _one_line_per_message(part_id: str, checks: list[CheckResult], verbose: bool,
                          log: list[dict] | None = None) -> list[str]:
    """One line for many checks failing the same way (a TODO, a module that does not load); with -v, one
    traceback per line, not per check."""
    by_message: "OrderedDict[str, list[CheckResult]]" = OrderedDict()
    for c in checks:
        by_message.setdefault(c.message, []).append(c)
    out: list[str] = []
    for message, same in by_message.items():
        head, *rest = message.strip().splitlines() or [""]
        out.append(f"✗ [{part_id}] {head} — не пройдено проверок: {len(same)}")
        out += [textwrap.indent(line, "    ") for line in rest]
        if log is not None:
            log.append(_shown(part_id, same[0], message.strip()))
        if verbose and same[0].traceback:
            tb = _last_frame(same[0].traceback) if same[0].kind == "todo" else same[0].traceback.rstrip()
            out.append(_bar(tb))
    return out


def lead_rank(c: CheckResult) -> int:
    """How a failure ranks to be read first in its group (lower first): 0 a named typical mistake, 1 a specific
    hint, 2 an explanation without a hint, 3 a check not run after a hang, 4 only a generic hint."""
    if c.diagnosis:
        return 0
    if c.kind == "hung":
        return 3
    hs = hints(c.message)
    if hs and all(is_generic(h) for h in hs) or is_generic(c.message.splitlines()[-1] if c.message else ""):
        return 4
    return 1 if hs else 2


def _lead(checks: list[CheckResult]) -> CheckResult:
    """The failure to read first: a named typical mistake, else a specific explanation, else the first; never one
    whose hint sends the student to another check of the same group (that one leads), unless all do."""
    free = [c for c in checks if not deferring(c, checks)] or checks
    return min(free, key=lead_rank)  # min keeps the first of equal rank: the test file's order


def _rerun(prefix: str, part_id: str, c: CheckResult) -> str:
    return f'{prefix} "{part_id}::{c.name}"'


def _shown(part_id: str, c: CheckResult, text: str) -> dict:
    """A text printed in full, for the log: its part, function, check, and the typical mistake it names (the check's
    field, ``""`` when none: never found in the text)."""
    return {"part": part_id, "function": c.subject or subject(c, []), "check": c.name, "title": c.title,
            "kind": c.kind, "text": text, "diagnosis": c.diagnosis if not c.passed else ""}


def _function_group(part_id: str, func: str, checks: list[CheckResult],
                    before: list[tuple[str, CheckResult | None]], rerun_prefix: str, verbose: bool,
                    log: list[dict] | None = None) -> list[str]:
    """One function's failed checks: the lead in full, the others one line each; or, when the student's function
    went through functions whose failures are above (``before``: each with its check shown in full there), one line
    each, after the advice to fix those first and the commands that rerun their checks."""
    rerun = functools.partial(_rerun, rerun_prefix, part_id)
    name = func or "другие проверки"
    if before:  # a function this one calls failed above: fix that first
        callee = ", ".join(g for g, _ in before)
        why = f"{func} вызывает {callee}, где есть ошибки (см. выше)" if func else f"выше есть ошибки в {callee}"
        out = [f"■ [{part_id}] {name} — не пройдено проверок: {len(checks)}. {why}: исправьте сначала "
               f"{'её' if len(before) == 1 else 'их'} — возможно, эти проверки пройдут сами."]
        out += [f"    Повторить {g}: {rerun(shown)}" for g, shown in before if shown is not None]
        out += [f"    · {c.title} — {rerun(c)}" for c in checks]
        return out + [""]
    lead = _lead(checks)
    others = [c for c in checks if c is not lead]
    out = [f"■ [{part_id}] {name} — не пройдено проверок: {len(checks)}"] if others else []
    out.append(f"✗ [{part_id}] {lead.title}")
    out.append(textwrap.indent(lead.message.strip() or "проверка не прошла", "    ", lambda line: True))
    if log is not None:
        log.append({**_shown(part_id, lead, lead.message.strip() or "проверка не прошла"), "function": func})
    if verbose and lead.traceback:
        out.append(_bar(lead.traceback.rstrip()))
    out.append(f"    Повторить: {rerun(lead)}")
    if others:
        out.append(f"  Остальные непройденные проверки {func or 'этой группы'} — скорее всего, по той же причине: "
                   "исправьте её и запустите снова.")
        out += [f"    · {c.title} — {rerun(c)}" for c in others]
    return out + [""]


def subject(c: CheckResult, functions: list[str]) -> str:
    """The function of the module under test a failed check is about ("" when unknown).

    A TODO names the function to write; otherwise the check's subject: the function whose answer it compared, as
    the check declares it (grader.grading.checks.graded), never a function it called to build its expected answer
    or a hint.
    """
    known = set(functions)
    m = _TODO.search(c.message)
    if m and (m.group(1) in known or not known):
        return m.group(1)
    return c.subject if c.subject and (c.subject in known or not known) else ""


_ORDER_CACHE: dict[tuple[str, float], list[str]] = {}


def function_order(hw: Homework, part) -> list[str]:
    """The part module's functions in the order to fix them.

    Read with ``ast`` from the reference module (or, in the student's copy, the stub): a function that others
    call comes before them (a function before its callers); otherwise the order of definition. (Whether the
    student's own function calls another is told by the worker, grader.boundary.tracing.)
    """
    path = hw.solutions_dir / f"{part.module}.py"
    if not path.is_file():
        path = hw.homework_dir / f"{part.module}.py"
    try:
        key = (str(path), path.stat().st_mtime)
        if key not in _ORDER_CACHE:
            _ORDER_CACHE[key] = _callees_first(ast.parse(path.read_text(encoding="utf-8")))
        return _ORDER_CACHE[key]
    except (OSError, SyntaxError, ValueError):
        return []


def _callees_first(tree: ast.Module) -> list[str]:
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    names = [d.name for d in defs]
    direct = {d.name: [] for d in defs}
    for d in defs:
        for node in ast.walk(d):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in direct \
                    and node.func.id != d.name and node.func.id not in direct[d.name]:
                direct[d.name].append(node.func.id)
    order: list[str] = []
    visiting: set[str] = set()

    def visit(f: str) -> None:
        if f in order or f in visiting:
            return
        visiting.add(f)
        for g in sorted(direct[f], key=names.index):
            visit(g)
        visiting.discard(f)
        order.append(f)

    for f in names:
        visit(f)
    return order


# ---- the words of a diagnosis, and hints read back (benchmarks/feedback_quality.py, tests/kit/test_feedback.py) ----


# Hints that fit any wrong answer, so they say nothing about the mistake at hand: the form of the answer,
# its type, NaN, "not written yet", "see the other checks". Substrings; the one place they are listed.
GENERIC_HINTS = (
    "проверьте форму ответа",
    "в ответе есть NaN или бесконечность",
    "функция ничего не вернула",
    "функция должна вернуть один массив",
    "функция должна вернуть одно число",
    "верните пару — кортеж из двух значений",
    "проверьте тип и форму того, что возвращает функция",
    "приводите входы к числам",
    "их проверки точнее",
    "сначала добейтесь верного ответа",
)

_HINT = re.compile(r"^\s*Подсказка:\s*(.*)$")


def hints(text: str) -> list[str]:
    """The «Подсказка:» lines of a failure's text, without the label."""
    return [m.group(1) for m in map(_HINT.match, text.splitlines()) if m]


def is_generic(hint: str) -> bool:
    return any(g in hint for g in GENERIC_HINTS)


def is_specific(text: str, diagnosis: str = "") -> bool:
    """A failure names the mistake (``diagnosis``: its check's field) or its text carries a hint that is not
    generic."""
    return bool(diagnosis) or any(not is_generic(h) for h in hints(text))


def failure_blocks(text: str) -> list[str]:
    """The failure blocks of a rendered scoreboard, in the order the student reads them.

    A block opens with a line starting with «✗» (after indentation) below the «Итого» line, and runs up to an
    empty line, a line that is not indented, the next «✗» line or a one-line entry («·»). One-line entries and
    notes («!») are not blocks.
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
        elif not line or stripped.startswith("·") or not line.startswith(" "):
            current = None
        elif current is not None:
            current.append(line)
    return ["\n".join(b) for b in blocks]
