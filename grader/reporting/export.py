"""Results for machines: Gradescope's results.json and a CSV row of part scores."""
from __future__ import annotations

import csv
import fnmatch
import json
import math
import os
from pathlib import Path

from grader.base import escape
from grader.base.results import PartResult, Totals, provenance
from grader.base.told import told

_UNIT = 10_000  # check points are written with 4 decimals
# results.json's format (extra_data.format): 2 — each named typical mistake is its check's field (CheckResult.
# diagnosis), in extra_data.mistakes and in its test's extra_data.diagnosis; a results.json without it named mistakes
# by the words of its outputs, which a student's text could forge (grader.reporting.class_report refuses it)
RESULTS_FORMAT = "hwkit-results/2"


def _check_worths(r: PartResult) -> list[float]:
    """Each check's share of its part's (bonus) points by weight, with 4 decimals, rounded so that the shares
    of a part add up to its points exactly (largest remainders get the last ten-thousandths)."""
    worths = [0.0] * len(r.checks)
    for bonus in (False, True):
        idx = [i for i, c in enumerate(r.checks) if c.bonus == bonus]
        total = sum(r.checks[i].weight for i in idx)
        if not idx or not total:
            continue
        pool = round((r.part.bonus_points if bonus else r.part.points) * _UNIT)
        exact = [pool * r.checks[i].weight / total for i in idx]
        units = [math.floor(x) for x in exact]
        by_remainder = sorted(range(len(idx)), key=lambda k: (units[k] - exact[k], k))
        for k in by_remainder[:pool - sum(units)]:
            units[k] += 1
        for k, i in enumerate(idx):
            worths[i] = units[k] / _UNIT
    return worths


# Gradescope's visibility levels of a test (and the default for all tests, at the top level)
VISIBILITY = ("visible", "after_due_date", "after_published", "hidden")
_LATER = {"after_due_date": "будут видны после срока сдачи", "after_published": "будут видны после публикации оценок",
          "hidden": "видны только преподавателю"}


def gradescope(results: list[PartResult], seconds: float, totals: Totals | None = None) -> dict:
    """Gradescope's results.json: score (bonus included), execution_time (whole seconds), one entry per check
    (its share of the part's points, Markdown output, visibility) and a summary in ``output``.
    ``extra_data`` holds the graded parts and the notes of each part (a notebook's cells that failed), so
    :func:`set_visibility` can rewrite the summary from this dict alone, and ``mistakes``: the typical mistakes the
    failed tests name, each its check's field (CheckResult.diagnosis, the line its output prints;
    grader.reporting.class_report builds the class report from them); ``format``: :data:`RESULTS_FORMAT`.
    ``totals``: those of ``results``, computed once by the caller (else here)."""
    tests, mistakes = [], []
    for r in results:
        if r.error:
            tests.append({"name": f"[{r.part.id}] часть не проверена", "score": 0.0, "max_score": r.part.points,
                          "status": "failed", "output": escape.code_block(r.error), "output_format": "md",
                          "visibility": "visible",
                          "extra_data": {"part": r.part.id, "check": "", "kind": "error", "bonus": False}})
        for i, (c, worth) in enumerate(zip(r.checks, _check_worths(r))):
            score = worth if c.passed else 0.0
            # a hint that sends the student to another check first: kept when that one failed, listed above
            message = told(c, r.checks[:i], [], None).message
            output = "Пройдено." if c.passed else escape.code_block(message.strip() or "проверка не прошла")
            named = c.diagnosis if not c.passed and c.diagnosis in message else ""  # where the student reads it
            if named:
                mistakes.append({"part": r.part.id, "check": c.name, "function": c.subject, "title": c.title,
                                 "text": named})
            tests.append({"name": f"[{r.part.id}] {c.title}", "score": round(score, 4), "max_score": round(worth, 4),
                          "status": "passed" if c.passed else "failed", "output": output, "output_format": "md",
                          "visibility": "visible",
                          "extra_data": {"part": r.part.id, "check": c.name, "kind": c.kind, "bonus": c.bonus,
                                         "subject": c.subject, "hidden_inputs": on_hidden_inputs(c),
                                         "diagnosis": named}})
    totals = totals or Totals.of(results)  # the scoreboard's total, to 2 decimals
    data = {"score": round(totals.score + totals.bonus, 2), "execution_time": max(0, math.ceil(seconds)),
            "output": "", "output_format": "md", "visibility": "visible", "tests": tests,
            "extra_data": {"format": RESULTS_FORMAT,
                           "parts": [{"id": r.part.id, "title": r.part.title, "points": r.part.points,
                                      "bonus_points": r.part.bonus_points} for r in results],
                           "notes": {r.part.id: list(r.notes) for r in results if r.notes},
                           "confinement": "; ".join(sorted({r.confinement for r in results if r.confinement})),
                           "mistakes": mistakes, **provenance(results)}}
    data["output"] = summary(data)
    return data


def on_hidden_inputs(c) -> bool:
    """Whether a check's verdict comes from hidden inputs: it ran them (a hidden twin, a check run only in the grade,
    a ``behaviour=True`` check: the collection's marks, grader.grading.hidden), or a hidden twin failed it (kind
    "hidden")."""
    return bool(c.hidden or c.kind == "hidden")


def visibility_matches(pattern: str, test: dict) -> bool:
    """Whether ``PART`` or ``PART::CHECK`` names this results.json entry. CHECK is a check's name
    (``test_gae_courier[lam0.95]``), its function's name (``test_gae_courier``, all its cases) or a
    shell-style pattern over either (``test_*_random``)."""
    info = test.get("extra_data", {})
    part, _, check = pattern.partition("::")
    if info.get("part") != part:
        return False
    if not check:
        return True
    name = info.get("check", "")
    return bool(name) and (fnmatch.fnmatchcase(name, check) or fnmatch.fnmatchcase(name.split("[")[0], check))


def set_visibility(data: dict, rules: list[tuple[str, str]], default: str = "visible",
                   hidden_inputs: str = "after_published") -> dict:
    """Give every test the visibility of the last rule ``(PART[::CHECK], level)`` that names it, else
    ``default`` (also written as the top-level visibility), and rewrite the summary in ``output`` so that it
    tells nothing about the tests students cannot see yet. A check failed on hidden inputs (its ``hidden_inputs``
    field: twins, checks run only in the grade, ``behaviour=True`` checks, public checks their twins failed) is shown
    no sooner than ``hidden_inputs``. Returns ``data``, changed in place."""
    for level in [default, hidden_inputs, *(lvl for _, lvl in rules)]:
        if level not in VISIBILITY:
            raise ValueError(f"unknown visibility {level!r}; one of {', '.join(VISIBILITY)}")
    data["visibility"] = default
    for test in data["tests"]:
        test["visibility"] = default
        for pattern, level in rules:
            if visibility_matches(pattern, test):
                test["visibility"] = level
        info = test.get("extra_data", {})
        if info.get("kind") == "hidden" or info.get("hidden_inputs") and test.get("status") != "passed":
            test["visibility"] = max(test["visibility"], hidden_inputs, key=VISIBILITY.index)
    data["output"] = summary(data)
    return data


def _pts(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def summary(data: dict, preface: list[str] | None = None) -> str:
    """The scoreboard of a results.json dict, in Russian, as a Markdown code block (``preface`` lines first),
    counting only the tests shown to students now (visibility ``visible``); the others are only counted, by
    when they will be shown."""
    shown = [t for t in data["tests"] if t.get("visibility", "visible") == "visible"]
    later: dict[str, list[dict]] = {}
    for t in data["tests"]:
        if t not in shown:
            later.setdefault(t["visibility"], []).append(t)
    parts = data.get("extra_data", {}).get("parts", [])
    rows, messages = [], []
    for p in parts:
        own = [t for t in shown if t.get("extra_data", {}).get("part") == p["id"]]
        if not own:
            continue
        main = [t for t in own if not t["extra_data"].get("bonus")]
        bonus = [t for t in own if t["extra_data"].get("bonus")]
        passed = sum(t["status"] == "passed" for t in own)
        mark = "✓" if passed == len(own) else "✗"
        pts = f"{_pts(sum(t['score'] for t in main))}/{_pts(sum(t['max_score'] for t in main))}"
        if bonus:
            pts += f" +{_pts(sum(t['score'] for t in bonus))}/{_pts(sum(t['max_score'] for t in bonus))} бонус"
        rows.append(f"{mark} {p['id']:<16} {f'{passed}/{len(own)}':<9} {pts}")
        for t in own:  # a module that did not load, a part not graded: said once per part
            if t["status"] != "passed" and t["extra_data"].get("kind") in ("load", "error"):
                text = t.get("output", "").strip().strip("`").strip().splitlines()
                line = f"✗ [{p['id']}] {text[0] if text else 'часть не проверена'}"
                if line not in messages:
                    messages.append(line)
    main = [t for t in shown if not t.get("extra_data", {}).get("bonus")]
    bonus = [t for t in shown if t.get("extra_data", {}).get("bonus")]
    total = (f"Итого{' по открытым проверкам' if later else ''} — баллы: {_pts(sum(t['score'] for t in main))} "
             f"из {_pts(sum(t['max_score'] for t in main))}; проверок пройдено: "
             f"{sum(t['status'] == 'passed' for t in shown)} из {len(shown)}")
    if bonus:
        total += f"; бонус: {_pts(sum(t['score'] for t in bonus))} из {_pts(sum(t['max_score'] for t in bonus))}"
    lines = [*(preface or []), *([""] if preface else []), total]
    if rows:
        lines += ["", f"  {'часть':<16} {'проверки':<9} баллы", *rows]
    if messages:
        lines += ["", *messages]
    for level, tests in later.items():
        lines += ["", f"Проверки, результаты которых {_LATER[level]}: {len(tests)} "
                      f"(баллы за них: {_pts(sum(t['max_score'] for t in tests))})."]
    notes = data.get("extra_data", {}).get("notes", {})
    for part_id, part_notes in notes.items():
        lines += ["", f"! [{part_id}] ячейки тетрадки, которые не выполнились (остальное проверено):",
                  *[f"    {n}" for n in part_notes]]
    return escape.code_block("\n".join(lines))


def write_json(path: str | Path, results: list[PartResult], seconds: float, totals: Totals | None = None) -> None:
    Path(path).write_text(json.dumps(gradescope(results, seconds, totals), ensure_ascii=False, indent=2),
                          encoding="utf-8")


def csv_row(submission: str, results: list[PartResult], totals: Totals | None = None) -> dict:
    """A graded submission's row: each part's score (and bonus), the totals (``totals``: computed once by the
    caller, else here) and which rules graded."""
    totals = totals or Totals.of(results)
    row = {"submission": submission}
    for r in results:
        row[r.part.id] = round(r.score, 2)
        if r.part.bonus_points:
            row[f"{r.part.id}_bonus"] = round(r.bonus_score, 2)
    row.update(total=totals.score, max=totals.max_score, bonus=totals.bonus, passed=totals.passed,
               checks=totals.checks)
    row.update(provenance(results))
    return row


def write_csv(path: str | Path, rows: list[dict], fields: list[str] | None = None) -> None:
    """The rows under a header of ``fields`` (and any other column a row has), written whole: a file that was
    there is replaced at once, never left half written."""
    fields = list(fields or [])
    for row in rows:
        fields += [k for k in row if k not in fields]
    path = Path(path)
    whole = not path.exists() or path.is_file() and not path.is_symlink()  # not /dev/stdout
    target = path.with_name(path.name + ".partial") if whole else path
    with open(target, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows({k: escape.csv_cell(v) for k, v in row.items()} for row in rows)
    if whole:
        os.replace(target, path)
