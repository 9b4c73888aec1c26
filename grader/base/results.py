"""What grading found: one record per check and per part, and a submission's totals over its parts, shared by the
runner that reads the checking process's events, the report a student reads, the exports for machines and batch
grading."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from grader.base.homeworks import Part

# the words a check prints before a typical mistake it names (grader.grading.checks); which mistake a check named is its
# result's field (CheckResult.diagnosis), never found by these words in a text
DIAGNOSIS = "Похоже на типичную ошибку"

@dataclass
class CheckResult:
    nodeid: str
    name: str
    title: str
    outcome: str  # passed or failed
    kind: str = ""  # for a failure: check, todo, error, timeout, hung (not run: the function hung before),
    # crash (the worker died), load (the module did not load)
    message: str = ""
    traceback: str = ""
    weight: float = 1.0
    bonus: bool = False
    functions: list[str] = field(default_factory=list)  # the student's functions the check called, first call first
    subject: str = ""  # the function this result is about (of ``subjects``: the one whose answer failed)
    subjects: list[str] = field(default_factory=list)  # the functions the check compares, as it declares them
    guard: bool = False  # code doing nothing could pass it: it counts only with a passed check of behaviour
    # function the check called -> the student's other functions that call went through (the worker's word: it only
    # words the feedback, "gae calls td_errors")
    entered: dict[str, list[str]] = field(default_factory=dict)
    # its hint sends the student to other checks first: {"checks": [test names], "text": the hint}
    # (grader.grading.checks.Defer)
    defer: dict = field(default_factory=dict)
    hidden: bool = False  # run on hidden inputs (grader.grading.hidden)
    twin: str = ""  # a hidden twin: the name of the public check it gates (it carries no points of its own)
    grade_only: bool = False  # runs only in the grade (a replay of what the student's code did; grader.grading.hidden)
    # the gates the check counts behind (its functions, or one behaviour of a function: grader.grading.checks.graded),
    # whether it can open them (an oracle check: the key's answer from its own copy of the inputs), and the student's
    # functions a replay composes (it counts only when each of theirs is open)
    gates: list[str] = field(default_factory=list)
    oracle: bool = False
    replays: list[str] = field(default_factory=list)
    # the typical mistake the check named («Похоже на типичную ошибку: …», the line as printed): the field the check's
    # helpers set on the checking side (grader.grading.checks), never found in the message, which may quote the student
    diagnosis: str = ""

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


@dataclass
class PartResult:
    part: Part
    checks: list[CheckResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str = ""  # the part could not be graded at all
    seconds: float = 0.0
    confinement: str = ""  # how the worker that ran the student's code was confined
    forged: int = 0  # lines in the results channel without the grader's signature (ignored)
    all_checks: list[dict] = field(default_factory=list)  # when only some checks were selected: all of the part's
    unknown: list[str] = field(default_factory=list)  # selected names that are no check of the part (none graded)
    grade_only: list[dict] = field(default_factory=list)  # checks left out of a self-check: run only in the grade
    inputs: str = "public"  # "hidden": the grade for the record (hidden inputs too); "public": a self-check
    secret: str = ""  # with hidden inputs: the fingerprint of the secret they derive from (grader.grading.hidden)
    kit: str = ""  # the version of the public checks (grader.grading.hidden.checks_version): the same in the copy
    cpu: float = 0.0  # the CPU time the worker spent on the part's calls, as the part's budget counts it

    def _weights(self, bonus: bool) -> tuple[float, float]:
        own = [c for c in self.checks if c.bonus == bonus]
        return sum(c.weight for c in own if c.passed), sum(c.weight for c in own)

    @property
    def score(self) -> float:
        got, total = self._weights(False)
        return self.part.points * got / total if total else 0.0

    @property
    def bonus_score(self) -> float:
        got, total = self._weights(True)
        return self.part.bonus_points * got / total if total else 0.0

    @property
    def n_passed(self) -> int:
        return sum(c.passed for c in self.checks)


@dataclass(frozen=True)
class Totals:
    """A submission's one total over its graded parts, computed once (:meth:`of`) and read by every output: the
    scoreboard, the Gradescope JSON, the CSV row, the class report's record, a batch's progress line and summary.
    Scores to 2 decimals (never a sum of rounded parts)."""
    score: float = 0.0
    max_score: float = 0.0
    bonus: float = 0.0
    max_bonus: float = 0.0
    passed: int = 0  # checks passed
    checks: int = 0

    @classmethod
    def of(cls, results: Sequence[PartResult]) -> Totals:
        return cls(score=round(sum(r.score for r in results), 2), max_score=sum(r.part.points for r in results),
                   bonus=round(sum(r.bonus_score for r in results), 2),
                   max_bonus=sum(r.part.bonus_points for r in results),
                   passed=sum(r.n_passed for r in results), checks=sum(len(r.checks) for r in results))


def provenance(results: Sequence[PartResult]) -> dict:
    """Which rules graded: the inputs ("hidden": the grade for the record; "public": a self-check), the secret's
    fingerprint, the checks' version."""
    return {"inputs": "hidden" if results and all(r.inputs == "hidden" for r in results) else "public",
            "secret": ",".join(sorted({r.secret for r in results if r.secret})),
            "kit": ",".join(sorted({r.kit for r in results if r.kit}))}
