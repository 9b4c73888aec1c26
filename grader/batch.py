"""Grading a folder of submissions: ``python homework/check.py HW --batch DIR [--jobs N] [--csv PATH]``.

A submission is an entry of DIR: a notebook (``carol.ipynb``) or a student's folder, where the work is found
wherever the student keeps it: modules at the top (``alice/<module>.py``) or in ``homework/<hw>/`` (a clone of
the student's repository, ``gh classroom clone``), a notebook at the top or in ``notebooks/``. Of the modules and
a notebook, the one the student worked in (whose code is not the kit's untouched stub) is graded; the CSV's
``graded`` column and the feedback say which. Links are skipped. Each part of each submission is graded
by its own checking process, and the submission's code runs in a confined worker with a scratch copy of the
submission's modules (grader/grading/runner.py, grader/boundary/): a submission that hangs,
crashes or misbehaves touches neither the others, nor DIR, nor the kit. Several submissions are graded at once
(``--jobs``); a progress line goes to stderr. As soon as a submission's processes are gone, its outputs are
written: its row is appended to the CSV, ``--feedback OUT`` gets its scoreboard and feedback (``OUT/<name>.txt``,
and ``.json``), ``--report REPORT`` its record (``REPORT/records/<name>.json``: its scores, its checks' verdicts and
the typical mistakes its feedback named); a submission that burns CPU holds up nobody else's (each part has a CPU
budget for all its calls: grader.grading.budget). At the end the CSV is written again in name order, and the class
report is built from the records (grader/reporting/class_report.py: ``REPORT/index.html``, ``report.json``,
``mistakes.csv``); the feedback goes to ``REPORT/feedback/`` unless ``--feedback`` says where. Ctrl-C ends the batch
within seconds, with every process it started, and keeps what was written (grader.grading.runner.interruptible).
"""
from __future__ import annotations

import csv
import os
import sys
import threading
import time
import traceback
from concurrent.futures import as_completed
from pathlib import Path

from grader.base import escape
from grader.base.homeworks import Homework, Part, UsageError
from grader.base.results import PartResult
from grader.boundary import confine
from grader.grading import hidden_answers
from grader.grading.runner import STOPPING, checking_template, interruptible, run_parts
from grader.grading.submissions import Submission, find_submissions
from grader.reporting import export
from grader.reporting.feedback import scoreboard

UNCONFINED_WARNING = (
    "внимание: код работ выполняется без изоляции (--allow-unconfined): ни пространств имён Linux, ни отдельного "
    "пользователя, только отдельные процессы с ограничениями ресурсов. Работа, написанная со злым умыслом, может "
    "прочитать ключ ответов, секрет, solutions/ и чужие работы или изменить файлы набора. Для оценок в ведомость "
    "проверяйте на Linux от root или там, где работает `unshare --user`.")
SEPARATE_USER_NOTE = (
    "пространств имён Linux здесь нет: код каждой работы выполняется от имени отдельного пользователя (uid {first} и "
    "далее), которому недоступны ключ ответов, секрет, solutions/, чужие работы и выходные файлы; память и диск на "
    "работу в целом не ограничены (cgroups не используются).")


def grade_submission(hw: Homework, parts: list[tuple[Part, list[str] | None]], sub: Submission,
                     timeout: float | None = None, show_hidden: bool = False) -> Submission:
    started = time.perf_counter()
    if sub.error:  # nothing to grade
        return sub
    try:  # one checking process per submission, its workers a user of its own (without namespaces)
        with confine.lease() as uid:
            sub.graded_as(run_parts(hw, parts, str(sub.path.resolve()), timeout, show_hidden=show_hidden, uid=uid))
    except Exception as exc:  # noqa: BLE001 - one submission must never stop the batch
        sub.error = f"{type(exc).__name__}: {exc}"
        sub.graded_as([])
        if not STOPPING.is_set():  # not a run ended by Ctrl-C (its results are not written)
            traceback.print_exc(file=sys.stderr)
    sub.seconds = time.perf_counter() - started
    return sub


class _Progress:
    """``[ 3/20] 0:12 alice — 87.5 из 100``: rewritten in place on a terminal, one line per submission otherwise."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.started = total, 0, time.perf_counter()
        self.stream = stream or sys.stderr
        self.tty = getattr(self.stream, "isatty", lambda: False)()
        self.lock = threading.Lock()

    def update(self, sub: Submission) -> None:
        with self.lock:
            self.done += 1
            elapsed = int(time.perf_counter() - self.started)
            if sub.error:
                what = f"не проверена: {sub.error.splitlines()[0]}"  # the whole reason: never cut mid-word
            else:
                what = f"{sub.totals.score:.1f} из {sub.totals.max_score:g}"
            counter = f"[{self.done:>{len(str(self.total))}}/{self.total}]"
            line = f"{counter} {elapsed // 60}:{elapsed % 60:02d} {sub.name} — {what}"
            if self.tty:
                self.stream.write("\r\033[K" + line + ("\n" if self.done == self.total else ""))
            else:
                self.stream.write(line + "\n")
            self.stream.flush()


def csv_row(sub: Submission, hw: Homework, parts: list[Part]) -> dict:
    if sub.error or not sub.results:
        row = {"submission": sub.name, **{p.id: 0.0 for p in parts}, "total": 0.0,
               "max": sum(p.points for p in parts)}
    else:
        row = export.csv_row(sub.name, sub.results, sub.totals)
    row["kind"] = sub.kind
    row["graded"] = sub.graded
    row["seconds"] = round(sub.seconds, 1)
    row["error"] = sub.error or "; ".join(f"{r.part.id}: не проверена ({escape.first_line(r.error)})"
                                          for r in sub.results if r.error)
    return row


def feedback_text(hw: Homework, sub: Submission) -> tuple[str, list[dict]]:
    """The scoreboard and feedback the student would see running the grader on this work, and the failure texts it
    printed in full (grader.reporting.feedback.scoreboard's ``shown``): what the class report may say this student
    was told."""
    if sub.error or not sub.results:
        return f"{hw.name}: работа {sub.name} не проверена: {sub.error or 'нет результатов'}", []
    source = f"работа {sub.name}" + (f" (тетрадка {sub.graded})" if sub.kind == "notebook" else
                                      f" (модули из {sub.graded})" if sub.graded not in ("", ".") else "")
    notebook = f" --notebook {escape.name(sub.path.name)}" if sub.kind == "notebook" else ""
    shown: list[dict] = []
    text = scoreboard(hw, sub.results, source, f"python homework/check.py {hw.name}{notebook}", first_run=False,
                      shown=shown, totals=sub.totals)
    return text, shown


def write_feedback(sub: Submission, text: str, out: Path) -> None:
    """``<name>.txt``: the feedback ``text``; ``<name>.json``: the same results in Gradescope's format."""
    if not sub.error and sub.results:
        export.write_json(out / f"{sub.stem}.json", sub.results, sub.seconds, sub.totals)
    (out / f"{sub.stem}.txt").write_bytes((text + "\n").encode("utf-8"))


def run(hw: Homework, parts: list[tuple[Part, list[str] | None]], folder: Path, jobs: int = 2,
        timeout: float | None = None, csv_path: str | None = None, stream=None,
        feedback_dir: str | None = None, allow_default_secret: bool = False,
        report_dir: str | None = None, allow_unconfined: bool = False, show_hidden: bool = False) -> list[Submission]:
    """Grade every submission in ``folder``; write the CSV (and, with ``feedback_dir``, each student's
    feedback; with ``report_dir``, each submission's record and the class report); print a summary table to stdout.
    A grade for the record: hidden inputs too, from the instructor's secret (grader.grading.secret); the kit's default
    secret only with ``allow_default_secret``. A failure on hidden inputs keeps its detail (inputs, expected answer,
    the student's text) out of the feedback and the report unless ``show_hidden`` (grader.grading.runner.withheld)."""
    refuse_to_grade(hw, parts, allow_default_secret, allow_unconfined)
    if not folder.is_dir():
        raise UsageError(f"папки с работами {folder} нет")
    feedback, report = output_folders(folder, feedback_dir, report_dir)
    subs = find_submissions(folder, hw)
    if not subs:
        raise UsageError(f"в папке {folder} нет работ: ожидаются папки с модулями или тетрадки .ipynb")
    if confine.mode() != "namespaces":
        print(SEPARATE_USER_NOTE.format(first=confine.UID_BASE) if confine.mode() == "user" else UNCONFINED_WARNING,
              file=stream or sys.stderr)
    outputs = Outputs(hw, [p for p, _ in parts], csv_path, feedback, report)
    try:
        with confine.closed_to_workers(folder):  # its outputs too: the CSV, the feedback, the records
            outputs.open()
            grade_class(hw, parts, subs, jobs, timeout, show_hidden, outputs, _Progress(len(subs), stream))
            outputs.close(subs)
    except KeyboardInterrupt:
        print(outputs.interrupted(len(subs)), file=stream or sys.stderr)
        raise
    print(summary(hw, subs, outputs.parts))
    if report is not None:
        print(build_class_report(hw, report, folder))
    return subs


def refuse_to_grade(hw: Homework, parts: list[tuple[Part, list[str] | None]], allow_default_secret: bool,
                    allow_unconfined: bool) -> None:
    """A grade for the record needs the instructor's secret (or ``allow_default_secret``), confinement (or
    ``allow_unconfined``) and the key's answers on the hidden inputs of every part graded whole: else UsageError."""
    from grader.grading.secret import refused

    if refused(hw, allow_default_secret):
        raise UsageError(refused(hw, allow_default_secret))
    if confine.unconfined_refused(allow_unconfined):
        raise UsageError(confine.unconfined_refused(allow_unconfined))
    # read by every grade of whole parts, computed by none (selected checks, as on the command line, are not refused:
    # one fails only if it asks the key about hidden inputs that no record holds)
    whole = [part.module for part, tests in parts if tests is None]
    if hidden_answers.refusal(hw, whole):
        raise UsageError(hidden_answers.refusal(hw, whole))


def output_folders(folder: Path, feedback_dir: str | None, report_dir: str | None) -> tuple[Path | None, Path | None]:
    """The feedback's folder (the report's ``feedback/`` unless ``--feedback`` says where) and the report's, neither
    in the class folder: the grader never writes into the students' work."""
    report = Path(report_dir).resolve() if report_dir else None
    if report is not None and not feedback_dir:
        feedback_dir = str(report / "feedback")
    feedback = Path(feedback_dir).resolve() if feedback_dir else None
    for out, option in ((feedback, "--feedback"), (report, "--report")):
        if out is not None and (out == folder.resolve() or folder.resolve() in out.parents):
            raise UsageError(f"папка для {'отзывов' if option == '--feedback' else 'отчёта'} ({option}) не должна "
                             "лежать в папке с работами: проверка не пишет в работы студентов")
    return feedback, report


def grade_class(hw: Homework, parts: list[tuple[Part, list[str] | None]], subs: list[Submission], jobs: int,
                timeout: float | None, show_hidden: bool, outputs: Outputs, progress: _Progress) -> None:
    """Grade the submissions, ``jobs`` at a time, each one's outputs written as soon as its processes are gone. One
    checking template pays pytest's and NumPy's start-up for the class (grader.grading.warm); Ctrl-C: every checking
    process and worker ended at once."""
    with checking_template(), interruptible(jobs) as pool:
        futures = [pool.submit(grade_submission, hw, parts, sub, timeout, show_hidden) for sub in subs]
        for future in as_completed(futures):
            sub = future.result()  # its processes are gone: its results are written now
            outputs.write(sub)
            progress.update(sub)


def csv_fields(hw: Homework, parts: list[Part]) -> list[str]:
    """The CSV's columns, known before any submission is graded: those of a graded submission's row."""
    return list(csv_row(Submission("", Path(), "folder", results=[PartResult(p) for p in parts]), hw, parts))


class Outputs:
    """A batch's outputs: the CSV (the header first, a row appended as each submission is done, all rewritten in name
    order at the end), and for each submission its feedback (``.txt`` and ``.json``) and its record for the class
    report. Each output is made once per submission, from its results and their totals (:meth:`write`)."""

    def __init__(self, hw: Homework, parts: list[Part], csv_path: str | None, feedback: Path | None,
                 report: Path | None):
        self.hw, self.parts, self.csv_path, self.feedback, self.report = hw, parts, csv_path, feedback, report
        self.fields = csv_fields(hw, parts)
        self.rows: dict[str, dict] = {}  # stem -> its CSV row, for the submissions written

    def open(self) -> None:
        if self.csv_path:
            Path(self.csv_path).parent.mkdir(parents=True, exist_ok=True)
            export.write_csv(self.csv_path, [], self.fields)  # the header now; each row as its submission is done
        for out in (self.feedback, self.report):
            if out is not None:
                out.mkdir(parents=True, exist_ok=True)
                confine.private(out)

    def write(self, sub: Submission) -> None:
        """A graded submission's outputs: its feedback files, its CSV row (appended), its record."""
        text, shown = feedback_text(self.hw, sub) if self.feedback is not None else ("", [])
        if self.feedback is not None:
            write_feedback(sub, text, self.feedback)
        row = csv_row(sub, self.hw, self.parts)
        if self.csv_path:
            append_row(self.csv_path, row, self.fields)
        if self.report is not None:
            write_record(sub, self.parts, row, shown, self.feedback, self.report)
        self.rows[sub.stem] = row  # written whole: what an interrupted batch reports as written

    def close(self, subs: list[Submission]) -> None:
        if self.csv_path:  # in name order, in place of the order they were done in
            export.write_csv(self.csv_path, [self.rows[sub.stem] for sub in subs], self.fields)

    def interrupted(self, total: int) -> str:
        """What a Ctrl-C leaves: how many submissions' outputs were written, and where."""
        kept = [what for what, there in ((f"строки в {self.csv_path}", self.csv_path),
                                         (f"отзывы в {self.feedback}", self.feedback),
                                         (f"записи в {self.report}", self.report)) if there]
        return (f"прервано (Ctrl-C): результаты {len(self.rows)} работ из {total} уже записаны"
                + (f" ({', '.join(kept)})" if kept and self.rows else ""))


def append_row(path: str | Path, row: dict, fields: list[str]) -> None:
    """One more row of the batch's CSV, whose header is ``fields`` (grader.reporting.export.write_csv); a column it
    does not have is left out."""
    with open(path, "a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writerow({k: escape.csv_cell(v) for k, v in row.items()})


def write_record(sub: Submission, parts: list[Part], row: dict, shown: list[dict], feedback: Path,
                 report: Path) -> None:
    """A submission's record for the class report (``report/records/<stem>.json``): its scores, its checks'
    verdicts and the failure texts its feedback showed (``shown``)."""
    from grader.reporting import class_report

    records_dir = report / "records"
    link = os.path.relpath(feedback / f"{sub.stem}.txt", records_dir)
    error = sub.error or ("" if sub.results else "нет результатов")
    record = class_report.record_from_results(sub.name, sub.results if not sub.error else [], shown,
                                              link, sub.kind, sub.graded, error, totals=sub.totals)
    if error:  # the CSV's row: every graded part at 0
        record["parts"] = [{"id": p.id, "title": p.title, "points": p.points, "bonus_points": p.bonus_points,
                            "score": 0.0, "bonus_score": 0.0, "error": ""} for p in parts]
        record["max"] = row["max"]
    class_report.write_record(records_dir, sub.stem, record)


def build_class_report(hw: Homework, report: Path, folder: Path | None = None) -> str:
    """The class report built from the records alone, as ``python -m grader.reporting.class_report report/records OUT
    --code FOLDER`` builds it again (the code of ``folder`` compared: grader.reporting.similarity); the line that says
    where."""
    from grader.reporting import class_report, similarity

    records, base = class_report.read_source(report / "records")
    alike = similarity.for_class(records, hw, folder)
    data = class_report.build(records, report, class_report.links_for(records, base, report), homework=hw.name,
                              alike=alike)
    pairs = len(alike["pairs"]) + alike["more"] if alike["available"] else "не сравнивались: нет copydetect"
    return (f"отчёт о классе: {report / 'index.html'} (названных типичных ошибок: {len(data['mistakes'])}; "
            f"похожих пар работ: {pairs}; данные: report.json, mistakes.csv)")


def graded(sub: Submission) -> bool:
    """The submission was graded: no failure of its own, and at least one part checked."""
    return not sub.error and any(not r.error for r in sub.results)


def summary(hw: Homework, subs: list[Submission], parts: list[Part]) -> str:
    """The table printed after a batch: how many submissions there were, how many were graded and how many not,
    each one's parts, total and (when a part has bonus points) bonus."""
    width = max(len(s.name) for s in subs)
    bonus = any(p.bonus_points for p in parts)
    head = (f"{'работа':<{width}}  " + "  ".join(f"{p.id:>8}" for p in parts) + f"  {'итого':>8}"
            + (f"  {'бонус':>8}" if bonus else ""))
    n_graded = sum(graded(s) for s in subs)
    lines = [f"{hw.name}: работ {len(subs)}, проверено {n_graded}, не проверено {len(subs) - n_graded}", "", head]
    for sub in subs:
        scores = {r.part.id: r for r in sub.results}
        cells = []
        for p in parts:
            r = scores.get(p.id)
            cells.append(f"{'—' if r is None or r.error else f'{r.score:.1f}':>8}")
        cells.append(f"{f'{sub.totals.score:.1f}' if graded(sub) else '—':>8}")
        if bonus:
            cells.append(f"{f'{sub.totals.bonus:.1f}' if graded(sub) else '—':>8}")
        error = f"  ({sub.error.splitlines()[0]})" if sub.error else ""
        lines.append(f"{sub.name:<{width}}  " + "  ".join(cells) + error)
    return "\n".join(lines)
