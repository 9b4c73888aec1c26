"""Grades into the LMS: the import file Canvas or Moodle documents, from a class's records and a roster.

``--roster FILE --lms canvas|moodle`` on ``check.py HW --batch DIR`` and on ``python -m grader.reporting.class_report
SOURCE OUT`` (records of a batch, or a Gradescope export). The file is a reader of the records
(grader.reporting.class_report), like the class report: nothing is graded again.

- **The roster** is a CSV of the instructor's: ``submission,lms_id`` and optionally ``name`` (other columns are
  ignored), UTF-8 (a BOM, as Excel writes it, is accepted), separated by commas or, as Excel writes it in a Russian
  locale, by semicolons. ``submission`` names a submission as grading named it: a batch's folder or notebook
  (``alice``), a GitHub Classroom login (``alice`` for the clone folder ``hw6-alice``: the folder's name ends with
  ``-`` and the login, and only one folder does), or a Gradescope export's submitter (its name or e-mail, from
  ``submission_metadata.yml``). Letter case does not matter. ``lms_id`` is what the LMS matches a student on: Canvas's
  «SIS Login ID», Moodle's e-mail. A roster with a missing column, an empty cell, a submission or an ``lms_id`` twice,
  a Moodle ``lms_id`` that is no e-mail, or an ``lms_id`` that a spreadsheet would read as a formula (its cell would be
  written with a leading apostrophe, and the LMS would match nobody) is refused whole, every faulty line named.
- **What is exported: the grade for the record only.** Every graded record must have been graded on hidden inputs
  (``inputs`` "hidden") from the instructor's own secret: a self-check (public inputs only), a grade from the kit's
  default secret (its fingerprint ends in ``-default``) or a record that does not say (written before records said) is
  refused, and then no file is written at all. The main points (of the homework's 100) go in the assignment's column,
  the bonus in a column of its own (none when the homework has no bonus).
- **Nothing is dropped silently.** A graded submission that no roster line names, a roster line that names no
  submission (or, by its Classroom login, more than one) and a roster line whose submission was not graded (an empty
  folder: no grade is written, so the LMS keeps what it has) are listed, and the command exits 1; the file still holds
  every grade that was matched. A refusal or a faulty roster exits 2 without writing it.
- Every cell is escaped for a spreadsheet (grader.base.escape.csv_cell).
"""
from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.base import escape
from grader.base.homeworks import UsageError

FORMATS = ("canvas", "moodle")
LABEL = {"canvas": "Canvas", "moodle": "Moodle"}
# Canvas's gradebook CSV: the leading columns of its own export, in the order its importer reads them (the sources
# are cited in docs/lms-canvas.md)
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_POINTS = "Points Possible"
MOODLE_EMAIL, MOODLE_NAME = "Email address", "Name"  # the e-mail's header is that of Moodle's own grade export
_FORMULA = ("=", "+", "-", "@", "\t", "\r")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_CANVAS_ID = re.compile(r"\s*\(\d+\)$")  # "ДЗ 6 (12345)": a Canvas column that names its assignment's id


@dataclass
class Entry:
    """One line of the roster."""
    line: int
    submission: str
    lms_id: str
    name: str = ""


@dataclass
class Export:
    """What ``--lms`` writes: the format, the roster, the file, the columns' headers."""
    lms: str
    roster: list[Entry]
    path: Path
    assignment: str
    bonus: str


def add_options(parser: argparse.ArgumentParser) -> None:
    """The command-line options of the LMS file (the batch's and grader.reporting.class_report's alike)."""
    parser.add_argument("--lms", choices=FORMATS, help="записать файл импорта оценок в LMS (Canvas или Moodle; "
                                                       "нужен --roster)")
    parser.add_argument("--roster", metavar="FILE", help="с --lms: список группы, CSV submission,lms_id[,name] "
                                                         "(работа → SIS Login ID в Canvas или e-mail в Moodle)")
    parser.add_argument("--lms-file", metavar="PATH", help="с --lms: куда записать файл (по умолчанию "
                                                           "ПАПКА_ОТЧЁТА/lms-canvas.csv или lms-moodle.csv)")
    parser.add_argument("--lms-assignment", metavar="NAME", help="с --lms: заголовок столбца задания (в Canvas — "
                                                                 "«Название (id)» существующего задания; по "
                                                                 "умолчанию имя домашней работы)")
    parser.add_argument("--lms-bonus", metavar="NAME", help="с --lms: заголовок столбца бонуса (по умолчанию "
                                                            "«ЗАДАНИЕ — бонус»)")


def from_args(args, out_dir: Path | None, homework: str) -> Export | None:
    """The export the options ask for, its roster read and checked now (before anything is graded), or None without
    ``--lms``. ``out_dir``: the folder the file goes to when ``--lms-file`` does not say (the report's)."""
    given = [o for o, v in (("--roster", args.roster), ("--lms-file", args.lms_file),
                            ("--lms-assignment", args.lms_assignment), ("--lms-bonus", args.lms_bonus)) if v]
    if not args.lms:
        if given:
            raise UsageError(f"{given[0]} — для файла LMS: добавьте --lms canvas или --lms moodle")
        return None
    if not args.roster:
        raise UsageError(f"--lms {args.lms}: нужен список группы --roster ФАЙЛ (CSV: submission,lms_id[,name]; "
                         "см. docs/lms-" + args.lms + ".md)")
    if args.lms_file:
        path = Path(args.lms_file)
    elif out_dir is not None:
        path = out_dir / f"lms-{args.lms}.csv"
    else:
        raise UsageError(f"--lms {args.lms}: укажите, куда записать файл: --lms-file ФАЙЛ (или --report ПАПКА)")
    assignment = (args.lms_assignment or homework or "Домашнее задание").strip()
    bonus = (args.lms_bonus or f"{_CANVAS_ID.sub('', assignment)} — бонус").strip()
    if assignment == bonus:
        raise UsageError("--lms-assignment и --lms-bonus: у столбцов задания и бонуса должны быть разные заголовки")
    return Export(args.lms, read_roster(Path(args.roster), args.lms), path, assignment, bonus)


# ---- the roster -----------------------------------------------------------------------------------------------

def _key(text: str) -> str:
    return text.strip().casefold()


def read_roster(path: Path, lms: str) -> list[Entry]:
    """The roster's lines; a faulty roster raises UsageError naming every faulty line."""
    rows, first = _csv_rows(path)
    header = [_key(h) for h in rows[0]] if rows else []
    missing = [c for c in ("submission", "lms_id") if c not in header]
    if missing:
        raise UsageError(f"--roster {path}: в первой строке нет столбца {', '.join(missing)}; нужен заголовок "
                         f"submission,lms_id (и, если хотите, name), а в файле: {escape.printable(first[:120])}")
    at = {c: header.index(c) for c in ("submission", "lms_id", "name") if c in header}
    entries, problems = [], []
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        cell = {c: (row[i].strip() if i < len(row) else "") for c, i in at.items()}
        entry = Entry(number, escape.name(cell["submission"]), cell["lms_id"], escape.name(cell.get("name", "")))
        if not entry.submission or not entry.lms_id:
            problems.append(f"строка {number}: пустой столбец {'submission' if not entry.submission else 'lms_id'}")
            continue
        problems += _lms_id_problems(entry, lms)
        entries.append(entry)
    problems += _twice(entries)
    if problems:
        listed = "\n  ".join(problems[:20]) + (f"\n  … и ещё {len(problems) - 20}" if len(problems) > 20 else "")
        raise UsageError(f"--roster {path}: список группы не принят, ничего не записано:\n  {listed}")
    if not entries:
        raise UsageError(f"--roster {path}: в списке группы нет ни одной строки после заголовка")
    return entries


def _csv_rows(path: Path) -> tuple[list[list[str]], str]:
    """The roster file's rows as CSV (UTF-8, a BOM allowed; ``;`` the delimiter where the first line has it and no
    comma), and its first line; a file that cannot be read so raises UsageError."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"--roster {path}: не прочитать файл ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"--roster {path}: файл не в UTF-8; сохраните его как «CSV UTF-8»") from None
    first = text.split("\n", 1)[0]
    delimiter = ";" if ";" in first and "," not in first else ","
    try:
        return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)), first
    except csv.Error as exc:
        raise UsageError(f"--roster {path}: это не CSV ({exc}); сохраните список как «CSV UTF-8»") from None


def _lms_id_problems(entry: Entry, lms: str) -> list[str]:
    """What is wrong with a line's lms_id (control characters, a formula, not an e-mail for Moodle): none or one."""
    shown = escape.printable(entry.lms_id)
    if shown != entry.lms_id:
        return [f"строка {entry.line}: в lms_id «{shown}» управляющие символы"]
    if entry.lms_id.startswith(_FORMULA):
        return [f"строка {entry.line}: lms_id «{shown}» начинается с {shown[0]!r}: таблица прочла бы его как "
                "формулу, в файл он попал бы с апострофом в начале, и LMS не узнала бы студента"]
    if lms == "moodle" and not _EMAIL.match(entry.lms_id):
        return [f"строка {entry.line}: lms_id «{shown}» — не адрес e-mail, а Moodle сопоставляет по e-mail"]
    return []


def _twice(entries: list[Entry]) -> list[str]:
    """The submissions and the lms_ids that two lines of the roster name (case and spaces aside)."""
    problems = []
    for field in ("submission", "lms_id"):
        seen: dict[str, int] = {}
        for e in entries:
            value = getattr(e, field)
            if _key(value) in seen:
                problems.append(f"строки {seen[_key(value)]} и {e.line}: {field} «{escape.printable(value)}» дважды")
            seen.setdefault(_key(value), e.line)
    return problems


# ---- the grades --------------------------------------------------------------------------------------------------

def refused(records: list[dict], homework: str = "ДЗ") -> str | None:
    """Why these records' grades may not go into an LMS (a self-check, the default secret, no word of either), or
    None. Only graded records count: one not graded has no grade to export."""
    public, default, unknown = [], [], []
    for r in records:
        if not r.get("checks"):
            continue
        secrets = [s for s in str(r.get("secret", "")).split(",") if s]
        if r.get("inputs") == "public":
            public.append(r["name"])
        elif r.get("inputs") != "hidden" or not secrets:
            unknown.append(r["name"])
        elif any(s.endswith("-default") for s in secrets):
            default.append(r["name"])
    lines = []
    if public:
        lines.append(f"самопроверка (только открытые входы, без скрытых): {_few(public)}")
    if default:
        lines.append(f"секрет скрытых входов по умолчанию (его знает каждый, у кого есть набор): {_few(default)}; "
                     f"заведите свой: python -m grader.grading.secret {homework} --new")
    if unknown:
        lines.append(f"в записи не сказано, на каких входах и с каким секретом она проверена: {_few(unknown)}")
    if not lines:
        return None
    return ("в LMS выгружается только оценка для ведомости — проверка на открытых и скрытых входах с вашим секретом; "
            "файл не записан. Не годятся:\n  " + "\n  ".join(lines) +
            f"\nПроверьте работы заново: python homework/check.py {homework} --batch ПАПКА --report ОТЧЁТ ...")


def _few(names: list[str], limit: int = 8) -> str:
    return ", ".join(names[:limit]) + (f" и ещё {len(names) - limit}" if len(names) > limit else "")


def _keys(record: dict) -> list[str]:
    """The names a roster may give a record: its name, and its submitters' e-mails (Gradescope)."""
    return [record["name"], *record.get("emails", [])]


def match(records: list[dict], roster: list[Entry]) -> tuple[list[tuple[Entry, dict]], list[str]]:
    """Each roster line's graded record (a line matches one record; a record may match several lines: a Gradescope
    group's submitters, by their e-mails) and, in words, every line and record left out."""
    by_key: dict[str, list[dict]] = {}
    for r in records:
        for k in dict.fromkeys(_key(k) for k in _keys(r)):
            by_key.setdefault(k, []).append(r)
    exact = {id(r) for e in roster for r in by_key.get(_key(e.submission), [])}
    pairs, problems, claimed = [], [], set()
    for e in roster:
        hits = by_key.get(_key(e.submission), [])
        if not hits:  # a GitHub Classroom login: the clone folder is <assignment>-<login>
            hits = [r for r in records if id(r) not in exact and _key(r["name"]).endswith("-" + _key(e.submission))]
        claimed |= {id(r) for r in hits}
        who = f"строка {e.line} списка: {e.submission} → {escape.printable(e.lms_id)}"
        if not hits:
            problems.append(f"{who}: работы с таким именем нет — оценки в файле нет")
        elif len(hits) > 1:
            problems.append(f"{who}: подходит больше одной работы ({_few([r['name'] for r in hits])}) — оценки в "
                            "файле нет; напишите в submission имя работы целиком")
        elif not hits[0].get("checks"):
            problems.append(f"{who}: работа {hits[0]['name']} не проверена — оценки в файле нет (в LMS останется "
                            "прежняя)")
        else:
            pairs.append((e, hits[0]))
    problems += [f"работа {r['name']}: её нет в списке группы (--roster) — оценки в файле нет"
                 for r in records if id(r) not in claimed]
    return pairs, problems


def _points(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def rows(export: Export, pairs: list[tuple[Entry, dict]], records: list[dict]) -> list[list]:
    """The import file's rows, header first, each cell escaped for a spreadsheet."""
    graded = [r for r in records if r.get("checks")]
    top = max((r["max"] for r in graded), default=0.0)
    bonus_top = max((sum(p.get("bonus_points", 0) for p in r["parts"]) for r in graded), default=0.0)
    with_bonus = bonus_top > 0
    grade = [export.assignment] + ([export.bonus] if with_bonus else [])
    out: list[list] = []
    if export.lms == "canvas":
        out.append(CANVAS_COLUMNS + grade)
        out.append([CANVAS_POINTS, "", "", "", "", _points(top)] + ([_points(bonus_top)] if with_bonus else []))
    else:
        out.append([MOODLE_EMAIL, MOODLE_NAME] + grade)
    for e, r in pairs:
        points = [_points(r["total"])]
        if with_bonus:
            points.append(_points(round(sum(p.get("bonus_score", 0) for p in r["parts"]), 2)))
        lead = [e.name, "", "", e.lms_id, ""] if export.lms == "canvas" else [e.lms_id, e.name]
        out.append(lead + points)
    return [[escape.csv_cell(cell) for cell in row] for row in out]


def write(export: Export, records: list[dict], homework: str = "ДЗ", stream=None, errors=None) -> int:
    """Write the import file from ``records``; print what it holds to ``stream`` and what did not match to ``errors``.
    The exit code: 0 all matched, 1 something listed (the file holds the rest), 2 refused (nothing written)."""
    stream, errors = stream or sys.stdout, errors or sys.stderr
    why = refused(records, homework)
    if why is None:
        tops = {r["max"] for r in records if r.get("checks")}
        if len(tops) > 1:
            why = (f"записи проверены по разным наборам частей (из {', '.join(_points(t) for t in sorted(tops))} "
                   "баллов): в LMS выгружается оценка за всю работу; файл не записан")
    if why:
        print(f"ошибка: {why}", file=errors)
        return 2
    pairs, problems = match(records, export.roster)
    table = rows(export, pairs, records)
    export.path.parent.mkdir(parents=True, exist_ok=True)
    with open(export.path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(table)
    columns = ", ".join(f"«{c}»" for c in table[0][len(CANVAS_COLUMNS) if export.lms == "canvas" else 2:])
    print(f"файл для {LABEL[export.lms]}: {export.path} — оценок {len(pairs)} из {len(export.roster)} строк списка "
          f"группы (столбцы {columns}); как его загрузить: docs/lms-{export.lms}.md", file=stream)
    if problems:
        print(f"не попало в файл ({len(problems)}):\n  " + "\n  ".join(problems), file=errors)
        return 1
    return 0


# ---- with --batch ------------------------------------------------------------------------------------------------

def check_batch(export: Export, hw, selected, folder: Path) -> None:
    """Before a batch is graded: what would make its grades unfit for the LMS, as a usage error (the same rule
    :func:`refused` applies to the records afterwards)."""
    from grader.grading.hidden import hidden_available
    from grader.grading.secret import is_default

    if len(selected) != len(hw.parts) or any(tests is not None for _, tests in selected):
        raise UsageError(f"--lms {export.lms}: в LMS выгружается оценка за всю работу — уберите выбор частей и "
                         "проверок")
    if not hidden_available(hw.tests_dir):
        raise UsageError(f"--lms {export.lms}: здесь нет ключа преподавателя, проверка была бы самопроверкой на "
                         "открытых входах, а в LMS выгружается только оценка для ведомости")
    if is_default(hw):
        raise UsageError(f"--lms {export.lms}: скрытые входы из секрета по умолчанию (его знает каждый, у кого есть "
                         "набор) — такая оценка не для ведомости; заведите свой: "
                         f"python -m grader.grading.secret {hw.name} --new")
    path, root = export.path.resolve(), folder.resolve()
    if path == root or root in path.parents:
        raise UsageError("файл для LMS (--lms-file) не должен лежать в папке с работами: проверка не пишет в работы "
                         "студентов")


def batch_records(subs) -> list[dict]:
    """The records of a batch's submissions (grader.grading.submissions.Submission), as ``--report`` writes them
    (without the failure texts, which the LMS file does not read)."""
    from grader.reporting import class_report

    return [class_report.record_from_results(s.name, [] if s.error else s.results, [],
                                             error=s.error or ("" if s.results else "нет результатов"),
                                             totals=s.totals)
            for s in subs]
