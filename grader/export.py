"""Results for machines: Gradescope's results.json and a CSV row of part scores."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from grader.report import totals
from grader.runner import CheckResult, PartResult


def _check_points(r: PartResult, c: CheckResult) -> tuple[float, float]:
    """(score, max score) of one check: its share of the part's (bonus) points by weight."""
    pool = r.part.bonus_points if c.bonus else r.part.points
    total = sum(x.weight for x in r.checks if x.bonus == c.bonus)
    worth = pool * c.weight / total if total else 0.0
    return (worth if c.passed else 0.0), worth


def gradescope(results: list[PartResult], seconds: float) -> dict:
    """Gradescope's results.json: score, execution_time, and one entry per check (output in Markdown)."""
    tests = []
    for r in results:
        if r.error:
            tests.append({"name": f"[{r.part.id}] часть не проверена", "score": 0.0, "max_score": r.part.points,
                          "status": "failed", "output": f"```\n{r.error}\n```", "output_format": "md"})
        for c in r.checks:
            score, worth = _check_points(r, c)
            entry = {"name": f"[{r.part.id}] {c.title}", "score": round(score, 4), "max_score": round(worth, 4),
                     "status": "passed" if c.passed else "failed", "output_format": "md",
                     "extra_data": {"part": r.part.id, "check": c.name, "kind": c.kind, "bonus": c.bonus}}
            if not c.passed:
                entry["output"] = f"```\n{c.message.strip()}\n```"
            tests.append(entry)
    score, max_score, bonus, _ = totals(results)
    levels = sorted({r.confinement for r in results if r.confinement})
    return {"score": round(score + bonus, 4), "execution_time": round(seconds, 3),
            "output": f"Итого {score:.1f} из {max_score:g}" + (f", бонус {bonus:.1f}" if bonus else ""),
            "extra_data": {"confinement": "; ".join(levels)}, "tests": tests}


def write_json(path: str | Path, results: list[PartResult], seconds: float) -> None:
    Path(path).write_text(json.dumps(gradescope(results, seconds), ensure_ascii=False, indent=2), encoding="utf-8")


def csv_row(submission: str, results: list[PartResult]) -> dict:
    score, max_score, bonus, _ = totals(results)
    row = {"submission": submission}
    for r in results:
        row[r.part.id] = round(r.score, 2)
        if r.part.bonus_points:
            row[f"{r.part.id}_bonus"] = round(r.bonus_score, 2)
    row.update(total=round(score, 2), max=max_score, bonus=round(bonus, 2),
               passed=sum(r.n_passed for r in results), checks=sum(len(r.checks) for r in results))
    return row


def write_csv(path: str | Path, rows: list[dict]) -> None:
    fields: list[str] = []
    for row in rows:
        fields += [k for k in row if k not in fields]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
