"""A failed check as the student is told it: a hint that sends the student to other checks first
(grader.grading.checks.Defer) kept when one of those failed where the student reads it, left out otherwise. Read
alike by the scoreboard (grader.reporting.feedback) and Gradescope's results.json (grader.reporting.export)."""
from __future__ import annotations

import dataclasses
from typing import Callable

from grader.base.results import CheckResult


def targets(c: CheckResult, checks: list[CheckResult]) -> list[CheckResult]:
    """Those of ``checks`` (failed) that ``c``'s hint sends the student to (grader.grading.checks.Defer)."""
    names = set(c.defer.get("checks", ())) if c.defer else set()
    return [t for t in checks if t is not c and not t.passed
            and (t.name in names or t.name.split("[")[0] in names or t.subject in names)]


def deferring(c: CheckResult, checks: list[CheckResult]) -> bool:
    return bool(targets(c, checks))


def told(c: CheckResult, above: list[CheckResult], group: list[CheckResult],
         rerun: Callable[[CheckResult], str] | None) -> CheckResult:
    """``c`` as the student reads it: a hint that sends the student to other checks first (``c.defer``) is kept
    only when one of them failed and is shown above (``above``, with the command that reruns it, when ``rerun``
    is given) or in the same group (``group``: that one then leads it); otherwise the hint is left out."""
    if not c.defer or c.passed:
        return c
    if targets(c, group):
        return c
    line = "Подсказка: " + c.defer["text"]
    lines = c.message.splitlines()
    shown = targets(c, above)
    if not shown:
        return dataclasses.replace(c, message="\n".join(x for x in lines if x != line))
    again = f"Повторить ту проверку: {rerun(shown[0])}" if rerun else ""
    return dataclasses.replace(c, message="\n".join(y for x in lines for y in ([x, again] if x == line and again
                                                                               else [x])))
