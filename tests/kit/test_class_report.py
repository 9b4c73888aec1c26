"""The class report (grader/reporting/class_report.py): what the class got wrong, from the records grading already
wrote.

The fast tests build it from made-up results (a Gradescope export, anonymizing, escaping, the feedback's own
attribution); the slow class grades a class made from the catalogue of typical mistakes (the reference, the stubs,
20 mutants, 3 submissions with two mistakes in two parts, one folder without work) on two parts with
``--batch DIR --report OUT`` and checks the report against the CSV and the feedback files.
"""
from __future__ import annotations

import ast
import csv
import json
import re
import shutil
import statistics
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from schema_subset import errors

from grader.base import homeworks
from grader.base.homeworks import ROOT
from grader.base.results import DIAGNOSIS, CheckResult, PartResult
from grader.grading import hidden
from grader.reporting import class_report, export, feedback
from kit import HW, run_check

SCHEMA = json.loads(class_report.SCHEMA_FILE.read_text(encoding="utf-8"))
GAE_FORWARD = "Похоже на типичную ошибку: рекурсия идёт с начала траектории, а нужно с конца (reversed)."
NO_LAMBDA = "Похоже на типичную ошибку: без λ."


# ---- reading the HTML back ----------------------------------------------------------------------------------

class _Page(HTMLParser):
    """Every tag and attribute of a page, and the text of its <style> elements."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


_LOADS = {"script", "link", "iframe", "frame", "object", "embed", "img", "image", "source", "video", "audio", "track",
          "input", "base", "meta"}
_URL_ATTRS = {"src", "href", "xlink:href", "srcset", "data", "action", "poster", "background", "formaction"}


def parse_page(text: str) -> _Page:
    """The page, parsed by Python's standard HTML parser; asserts it loads nothing from anywhere."""
    page = _Page()
    page.feed(text)
    page.close()
    for tag, attrs in page.tags:
        if tag in _LOADS and tag != "meta":
            raise AssertionError(f"<{tag}> loads a resource: {attrs}")
        if tag == "meta":
            assert set(attrs) == {"charset"}, attrs  # no refresh, no redirect
        for name, value in attrs.items():
            value = (value or "").strip().lower()
            if name in _URL_ATTRS:
                assert tag == "a" or (tag == "use" and value.startswith("#")), (tag, attrs)
                assert not re.match(r"^([a-z][a-z0-9+.-]*:|//)", value), (tag, attrs)  # a relative link only
            assert _local_urls(value), (tag, attrs)
            assert not name.startswith("on"), (tag, attrs)  # no script in an attribute either
    assert all(_local_urls(s) and "@import" not in s for s in page.styles)
    return page


def _local_urls(text: str) -> bool:
    """Every ``url(...)`` of a style or an SVG attribute points inside the page (``url(#clip)``)."""
    return all(u.strip("'\" ").startswith("#") for u in re.findall(r"url\(([^)]*)\)", text))


# ---- made-up results -----------------------------------------------------------------------------------------

def _check(name, title, subject, message="", kind="check", passed=False, diagnosis=""):
    return CheckResult(f"tests/{HW}/test_ppo.py::{name}", name, title, "passed" if passed else "failed",
                       "" if passed else kind, message, subject=subject, subjects=[subject], diagnosis=diagnosis)


def _results(*checks) -> list[PartResult]:
    return [PartResult(homeworks.load(HW).part("ppo"), list(checks), confinement="пространства имён Linux",
                       inputs="hidden")]


GAE_LEAD = _check("test_gae_courier", "GAE курьера", "gae", f"Проверяли: gae\nОжидали: 1\nПолучили: 2\n{GAE_FORWARD}",
                  diagnosis=GAE_FORWARD)
GAE_OTHER = _check("test_gae_random", "GAE случайный", "gae", f"Проверяли: gae\nОжидали: 1\nПолучили: 3\n{NO_LAMBDA}",
                   diagnosis=NO_LAMBDA)
TD_FAIL = _check("test_td_errors", "δ курьера", "td_errors", "Проверяли: δ\nОжидали: 1\nПолучили: 0")
PASS = _check("test_loss", "loss", "ppo_loss", passed=True)


def test_the_report_names_what_the_scoreboard_printed_and_nothing_more():
    """Two diagnoses in one function's failures: the scoreboard prints the lead in full and the other as one line;
    only the lead's diagnosis was read, so only it is named."""
    shown: list[dict] = []
    text = feedback.scoreboard(homeworks.load(HW), _results(GAE_LEAD, GAE_OTHER, TD_FAIL, PASS), "работа", "check.py",
                             first_run=False, shown=shown)
    record = class_report.record_from_results("alice", _results(GAE_LEAD, GAE_OTHER, TD_FAIL, PASS), shown)
    assert [m["text"] for m in record["mistakes"]] == [line.strip() for line in text.splitlines()
                                                       if line.strip().startswith(DIAGNOSIS)] == [GAE_FORWARD]
    assert record["mistakes"][0]["function"] == "gae" and record["mistakes"][0]["told"] in \
        "\n".join(line[4:] for line in text.splitlines())
    data = class_report.build_data([record])
    assert [(u["function"], u["count"]) for u in data["unnamed"]] == [("td_errors", 1)]  # the δ failure: no name
    assert not errors(data, SCHEMA)


def _export(tmp_path: Path) -> Path:
    """A Gradescope export: submission_<id>/results.json and submission_metadata.yml, as «Export Submissions» gives."""
    root = tmp_path / "assignment_7_export"
    people = {"submission_11": ("Анна Петрова", _results(GAE_LEAD, GAE_OTHER, TD_FAIL, PASS)),
              "submission_12": ("Борис <b>", _results(_check("test_gae_courier", "GAE курьера", "gae", passed=True),
                                                      GAE_OTHER, TD_FAIL, PASS)),
              "submission_13": ("=cmd|' /C calc'!A0", _results(_check("test_gae_courier", "GAE курьера", "gae",
                                                                      passed=True), PASS))}
    lines = []
    for folder, (name, results) in people.items():
        data = export.gradescope(results, 1.0)
        export.set_visibility(data, [("ppo::test_gae_random", "hidden")] if folder == "submission_12" else [])
        (root / folder).mkdir(parents=True)
        (root / folder / "results.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        (root / folder / "ppo.py").write_text("# the student's code\n", encoding="utf-8")
        lines += [f"{folder}:", "  :submitters:", f"  - :name: \"{name}\"", "    :sid: '1'", "  :score: 1.0"]
    (root / "submission_metadata.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_gradescope_export_gives_the_same_report(tmp_path, monkeypatch):
    """results.json keeps each submission's named mistakes (extra_data.mistakes: the diagnosis lines of its failed
    tests' outputs); the report from an export counts those, except a test students never see (visibility
    hidden). Names come from submission_metadata.yml and are escaped where they land."""
    root = _export(tmp_path)
    data = json.loads((root / "submission_11" / "results.json").read_text(encoding="utf-8"))
    assert [m["text"] for m in data["extra_data"]["mistakes"]] == [GAE_FORWARD, NO_LAMBDA]  # every output is read
    out = tmp_path / "report"
    assert class_report.main([str(root.parent), str(out), "--tables"]) == 0
    got = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert not errors(got, SCHEMA)
    named = {m["text"]: m["submissions"] for m in got["mistakes"]}
    assert named == {GAE_FORWARD: ["Анна Петрова"], NO_LAMBDA: ["Анна Петрова"]}  # Борис's was hidden
    assert got["overview"]["submissions"] == got["overview"]["graded"] == 3
    gae = next(c for c in got["checks"] if c["check"] == "test_gae_courier")
    assert (gae["runs"], gae["passed"]) == (3, 2)
    page = (out / "index.html").read_text(encoding="utf-8")
    parse_page(page)
    assert "Борис &lt;b&gt;" in page and "Борис <b>" not in page
    assert [a["href"] for t, a in parse_page(page).tags if t == "a"][:1] == ["../assignment_7_export/submission_11/"
                                                                             "results.json"]
    rows = list(csv.DictReader(open(out / "mistakes.csv", encoding="utf-8")))
    assert {r["submission"] for r in rows} == {"Анна Петрова"}
    zipped = shutil.make_archive(str(tmp_path / "export"), "zip", tmp_path, root.name)  # the export as downloaded
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    assert class_report.main([zipped, str(tmp_path / "from_zip"), "--tables"]) == 0
    assert not list((tmp_path / "tmp").iterdir())  # the students' files extracted from the zip are not left behind
    again = json.loads((tmp_path / "from_zip" / "report.json").read_text(encoding="utf-8"))
    assert again["mistakes"] == got["mistakes"]


def test_anonymized_report_keeps_no_name_and_its_hashes_are_stable(tmp_path):
    root = _export(tmp_path)
    for run in ("a", "b"):
        assert class_report.main([str(root), str(tmp_path / run), "--anonymize", "--salt", "осень", "--tables"]) == 0
    texts = {run: {f: (tmp_path / run / f).read_text(encoding="utf-8") for f in ("index.html", "report.json",
                                                                                   "mistakes.csv")} for run in "ab"}
    assert texts["a"] == texts["b"]  # the same names, the same salt: the same hashes
    for text in texts["a"].values():
        assert "Анна" not in text and "Борис" not in text and "calc" not in text and "results.json\"" not in text
    names = [s["name"] for s in json.loads(texts["a"]["report.json"])["submissions"]]
    assert names == sorted(names, key=lambda n: names.index(n)) and all(re.fullmatch(r"работа-[0-9a-f]{10}", n)
                                                                        for n in names)
    assert class_report.anonymous("Анна Петрова", "осень") in names
    assert class_report.anonymous("Анна Петрова", "весна") not in names  # another salt, other hashes
    assert not [a for t, a in parse_page(texts["a"]["index.html"]).tags if t == "a"]  # no link names a student


def test_csv_cells_are_never_formulas_and_the_validator_refuses_a_broken_report(tmp_path):
    record = class_report.record_from_results("=HYPERLINK(\"x\")", _results(GAE_LEAD, PASS), [
        {"part": "ppo", "function": "gae", "check": "test_gae_courier", "title": "GAE", "kind": "check",
         "text": GAE_LEAD.message, "diagnosis": GAE_FORWARD}])
    data = class_report.build([record], tmp_path, plots=False)
    assert next(csv.DictReader(open(tmp_path / "mistakes.csv", encoding="utf-8")))["submission"] == "'=HYPERLINK(\"x\")"
    assert not errors(data, SCHEMA)
    broken = json.loads(json.dumps(data))
    broken["mistakes"][0]["share"] = 1.5
    del broken["checks"][0]["runs"]
    assert len(errors(broken, SCHEMA)) == 2
    with pytest.raises(ValueError):
        errors({}, {"type": "object", "oneOf": []})  # a rule the validator does not know is refused, not skipped


def test_records_of_the_old_form_are_refused_with_how_to_grade_again(tmp_path, capsys):
    """A batch's record of version 1 and a results.json without extra_data.format named their mistakes by the words of
    the feedback, which a student's text could forge: the report refuses them and says how to grade again."""
    record = class_report.record_from_results("alice", _results(GAE_LEAD, PASS), [])
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "alice.json").write_text(json.dumps({**record, "record": 1}), encoding="utf-8")
    assert class_report.main([str(tmp_path / "records"), str(tmp_path / "out"), "--tables"]) == 2
    said = capsys.readouterr().err
    assert "прежнего вида" in said and "--batch" in said and "--report" in said, said
    assert not (tmp_path / "out" / "report.json").exists()
    data = export.gradescope(_results(GAE_LEAD, PASS), 1.0)
    del data["extra_data"]["format"]
    (tmp_path / "export" / "submission_1").mkdir(parents=True)
    (tmp_path / "export" / "submission_1" / "results.json").write_text(json.dumps(data), encoding="utf-8")
    assert class_report.main([str(tmp_path / "export"), str(tmp_path / "out"), "--tables"]) == 2
    said = capsys.readouterr().err
    assert "прежней версией" in said and "Regrade" in said and "grader.gradescope" in said, said


# ---- a class from the catalogue, graded with --batch --report ---------------------------------------------------

MUTANTS = ROOT / "tests" / "kit" / "mutants" / HW
PARTS = ("ppo", "mc_td")
SINGLE = ["ppo/gae_forward", "ppo/gae_no_lambda", "ppo/normalize_ddof1", "ppo/clip_max", "ppo/td_no_gamma",
          "ppo/loss_entropy_sign", "ppo/truncated_as_terminal", "ppo/boundaries_swapped", "ppo/returns_without_values",
          "mc_td/returns_forward", "mc_td/td_no_gamma", "mc_td/td_no_terminal_mask", "mc_td/every_visit_always",
          "mc_td/mc_last_visit", "mc_td/td_backwards", "mc_td/returns_not_reversed", "mc_td/td_sign_flipped"]
UNNAMED = ["ppo/inputs_mutated"]  # its feedback gives a specific hint but names no mistake (no diagnosis line)
CLASS = {f"s{i:02d}": [m] for i, m in enumerate(SINGLE + UNNAMED + ["ppo/gae_forward"])}  # gae_forward twice alone
CLASS.update({"d1": ["ppo/gae_forward", "mc_td/td_no_gamma"], "d2": ["ppo/normalize_ddof1", "mc_td/returns_forward"],
              "d3": ["ppo/clip_max", "mc_td/mc_last_visit"], "anna": [], "ivan": None})


def _literal(path: Path, name: str):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                and getattr(n.targets[0], "id", "") == name)


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("class")
    folder = tmp / "submissions"
    for name, planted in CLASS.items():
        (folder / name).mkdir(parents=True)
        for part in PARTS:
            source = ROOT / ("homework" if planted is None else "solutions") / HW / f"{part}.py"
            text = source.read_text(encoding="utf-8")
            for m in planted or []:
                if m.startswith(part + "/"):
                    text += "\n\n# ---- mutant ----\n" + (MUTANTS / f"{m}.py").read_text(encoding="utf-8")
            (folder / name / f"{part}.py").write_text(text, encoding="utf-8")
    (folder / "nothing").mkdir()  # no work in it: not gradable, and the report says why
    out = tmp / "report"
    proc = run_check(HW, *PARTS, "--batch", str(folder), "--jobs", "2", "--csv", str(tmp / "scores.csv"),
                     "--report", str(out), timeout=600)
    assert (out / "report.json").is_file(), proc.stdout + proc.stderr
    rows = {r["submission"]: r for r in csv.DictReader(open(tmp / "scores.csv", encoding="utf-8"))}
    return tmp, out, json.loads((out / "report.json").read_text(encoding="utf-8")), rows


@pytest.mark.slow
def test_every_planted_mistake_is_counted_for_exactly_its_submissions(graded_class):
    _, _, data, _ = graded_class
    carriers: dict[str, set] = {}
    for name, planted in CLASS.items():
        for m in planted or []:
            carriers.setdefault(m, set()).add(name)
    for m, who in carriers.items():
        part = m.split("/")[0]
        named_by = _literal(MUTANTS / f"{m}.py", "NAMED_BY")
        rows = [r for r in data["mistakes"] if r["part"] == part and any(piece in r["text"] for piece in named_by)]
        counted = {s for r in rows for s in r["submissions"]}
        if m in UNNAMED:
            breaks = _literal(MUTANTS / f"{m}.py", "BREAKS")
            assert not counted, (m, rows)
            assert who <= {s for u in data["unnamed"] if u["part"] == part and u["function"] in breaks
                           for s in u["submissions"]}, m
        else:
            assert counted == who, (m, counted, who)
    named = {s for r in data["mistakes"] for s in r["submissions"]}
    assert "anna" not in named and "ivan" not in named  # the reference names nothing, nor do the stubs (TODO)


@pytest.mark.slow
def test_the_report_names_exactly_what_each_feedback_file_says(graded_class):
    tmp, out, data, _ = graded_class
    by_id = {m["id"]: m for m in data["mistakes"]}
    for s in data["submissions"]:
        text = (out / s["feedback"]).read_text(encoding="utf-8")
        said = {line.strip() for line in text.splitlines() if line.strip().startswith(DIAGNOSIS)}
        assert {by_id[i]["text"] for i in s["mistakes"]} == said, s["name"]
    for m in data["mistakes"]:  # the text shown is the feedback exactly as the first student read it
        first = next(s for s in data["submissions"] if s["name"] == m["submissions"][0])
        printed = "\n".join(line[4:] for line in (out / first["feedback"]).read_text(encoding="utf-8").splitlines())
        assert m["told"] in printed
    rows = list(csv.DictReader(open(out / "mistakes.csv", encoding="utf-8")))
    assert sorted((r["submission"], r["mistake"]) for r in rows) == sorted(
        (s["name"], by_id[i]["text"]) for s in data["submissions"] for i in s["mistakes"])


@pytest.mark.slow
def test_shares_and_pass_rates_match_the_csv(graded_class):
    _, _, data, rows = graded_class
    o = data["overview"]
    assert o["submissions"] == len(rows) == len(CLASS) + 1
    graded = [r for r in rows.values() if int(r.get("checks") or 0) > 0]
    assert o["graded"] == len(graded) == len(CLASS)
    assert o["not_graded"] == 1 and "не найдено работы" in o["reasons"][0]["reason"]
    assert o["reasons"][0]["submissions"] == ["nothing"]
    totals = [float(r["total"]) for r in rows.values()]
    assert (o["mean"], o["median"]) == (round(statistics.fmean(totals), 2), round(statistics.median(totals), 2))
    for s in data["submissions"]:
        row = rows[s["name"]]
        assert s["total"] == float(row["total"]) and all(s["parts"][p] == float(row[p]) for p in PARTS)
        assert (s["passed"], s["checks"]) == (int(row.get("passed") or 0), int(row.get("checks") or 0))
    for m in data["mistakes"]:
        assert m["share"] == round(len(m["submissions"]) / len(graded), 4)
    assert sum(c["passed"] for c in data["checks"]) == sum(int(r["passed"]) for r in graded)
    assert all(c["runs"] == len(graded) for c in data["checks"])
    rates = [c["pass_rate"] for c in data["checks"]]
    assert rates == sorted(rates)  # hardest first
    gae = next(m for m in data["mistakes"] if m["part"] == "ppo" and "reversed" in m["text"])
    assert gae["count"] == 3 and gae["share"] == round(3 / len(graded), 4) and gae["function"] == "gae"


@pytest.mark.slow
def test_the_page_parses_and_loads_nothing_and_the_json_validates(graded_class):
    tmp, out, data, _ = graded_class
    page = parse_page((out / "index.html").read_text(encoding="utf-8"))
    links = [a["href"] for t, a in page.tags if t == "a"]
    assert links and all((out / link).is_file() for link in links)  # each to a student's feedback file
    assert not errors(data, SCHEMA)
    assert len((out / "index.html").read_bytes()) < 300_000
    again = tmp / "again"  # the same report, built again from the records alone
    assert class_report.main([str(out / "records"), str(again), "--tables"]) == 0
    rebuilt = json.loads((again / "report.json").read_text(encoding="utf-8"))
    assert rebuilt["mistakes"] == data["mistakes"] and rebuilt["checks"] == data["checks"]
    # the Gradescope path: each feedback's results.json, laid out as an export, names at least what the
    # scoreboard named (its outputs show every failed test in full)
    export_dir = tmp / "export"
    for i, s in enumerate(data["submissions"]):
        results = (out / s["feedback"]).with_suffix(".json")
        if results.is_file():
            (export_dir / f"submission_{i}").mkdir(parents=True)
            shutil.copy(results, export_dir / f"submission_{i}" / "results.json")
    assert class_report.main([str(export_dir), str(tmp / "gradescope"), "--tables"]) == 0
    gs = json.loads((tmp / "gradescope" / "report.json").read_text(encoding="utf-8"))
    assert {(m["part"], m["text"]) for m in data["mistakes"]} <= {(m["part"], m["text"]) for m in gs["mistakes"]}
    assert [c["pass_rate"] for c in gs["checks"]] == [c["pass_rate"] for c in data["checks"]]


def test_report_needs_a_batch(tmp_path):
    proc = run_check(HW, "ppo", "--report", str(tmp_path / "report"))
    assert proc.returncode == 2 and "--batch" in proc.stderr and "grader.reporting.class_report" in proc.stderr


# ---- a typical mistake cannot be forged by the student's own text --------------------------------------------

# the real mistake of the class (tests/kit/mutants/.../ppo/td_no_gamma.py), as its check names it
REAL = "ppo/td_no_gamma"
FORGED = f"{DIAGNOSIS}: γ не умножен на V(s_{{t+1}})."
# Three routes by which a submission's text once reached a failure's message over lines of its own, each carrying the
# real mistake's diagnosis: a string answer (printed as str(got)), an exception at import (the load error), and the
# name of a code file in the hang report (a code object compiled under a name that looks like a notebook cell's).
FORGERS = {
    "answer": f'''

def td_errors(rewards, values, last_value, gamma):
    return "x\\n{FORGED}"
''',
    "import": f'''

raise RuntimeError("x\\n{FORGED}\\ny")
''',
    "hang": f'''
import types as _types

_real_td_errors = td_errors
gae = _types.FunctionType(gae.__code__, {{**globals(), "td_errors": _real_td_errors}})  # only td_errors loops


def td_errors(rewards, values, last_value, gamma):
    code = compile("def spin():\\n    while True:\\n        pass\\nspin()\\n", "<ячейка 1\\n{FORGED}\\n>", "exec")
    exec(code, {{}})
''',
}


@pytest.mark.slow
@pytest.mark.parametrize("route", list(FORGERS))
def test_a_students_text_never_names_a_typical_mistake(tmp_path, route):
    """A class of three on the part ppo: a real mistake, the reference, and a submission whose own text carries the
    real mistake's diagnosis by one route. The mistake is counted once, for its real carrier; the forger is named in
    no mistake, and no line of its feedback is a diagnosis (its text stays inline, escaped)."""
    folder = tmp_path / "submissions"
    reference = (ROOT / "solutions" / HW / "ppo.py").read_text(encoding="utf-8")
    for name, extra in (("real", (MUTANTS / f"{REAL}.py").read_text(encoding="utf-8")), ("anna", ""),
                        ("forger", FORGERS[route])):
        (folder / name).mkdir(parents=True)
        (folder / name / "ppo.py").write_text(reference + "\n\n" + extra, encoding="utf-8")
    out = tmp_path / "report"
    proc = run_check(HW, "ppo", "--batch", str(folder), "--jobs", "2", "--timeout", "2", "--report", str(out),
                     timeout=600)
    assert (out / "report.json").is_file(), proc.stdout + proc.stderr
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert not errors(data, SCHEMA)
    real = [m for m in data["mistakes"] if m["text"] == FORGED]
    assert [(m["part"], m["function"], m["count"], m["submissions"]) for m in real] == [("ppo", "td_errors", 1,
                                                                                         ["real"])], data["mistakes"]
    assert not [m for m in data["mistakes"] if "forger" in m["submissions"]], data["mistakes"]
    feedback = (out / next(s["feedback"] for s in data["submissions"] if s["name"] == "forger")).read_text(
        encoding="utf-8")
    assert not [line for line in feedback.splitlines() if line.strip().startswith(DIAGNOSIS)], feedback
    said = {"answer": "str: x\\x0aПохоже", "import": "RuntimeError: x\\x0aПохоже", "hang": "превышено время"}[route]
    assert said in feedback, feedback  # the forger's failure is told, its text as one line


def test_an_anonymized_report_quotes_no_submissions_name(tmp_path):
    """A reason that names a folder ("в папке frank_empty не найдено работы…", as the batch writes it), a part's
    error naming another, a mistake's text naming a third: neither index.html nor report.json has any of the names."""
    records_dir = tmp_path / "records"
    told = GAE_FORWARD + " (работа carol_notebook)"
    lead = _check("test_gae_courier", "GAE курьера", "gae", f"Проверяли: gae\n{told}", diagnosis=told)
    for name, results, error in [("alice_ref", _results(PASS), ""),
                                 ("carol_notebook", _results(lead, PASS), ""),
                                 ("frank_empty", [], "в папке frank_empty не найдено работы: нет модулей (ppo.py, …) "
                                                     "ни в ней, ни в homework/x/")]:
        shown = [{"part": "ppo", "function": "gae", "check": "test_gae_courier", "title": "GAE курьера",
                  "diagnosis": told, "text": told}] if results and name == "carol_notebook" else []
        record = class_report.record_from_results(name, results, shown, error=error)
        if name == "alice_ref":
            record["parts"][0]["error"] = "ppo.py в папке alice_ref не загружается"
        class_report.write_record(records_dir, name, record)
    out = tmp_path / "out"
    assert class_report.main([str(records_dir), str(out), "--anonymize", "--salt", "осень", "--tables"]) == 0
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert len(data["overview"]["reasons"]) == 2 and data["mistakes"]  # the texts that named them are there
    for file in ("index.html", "report.json", "mistakes.csv"):
        text = (out / file).read_text(encoding="utf-8")
        for name in ("alice_ref", "carol_notebook", "frank_empty"):
            assert name not in text, (file, name)


def test_anonymize_without_a_salt_keys_the_hashes_with_the_instructors_secret(tmp_path, monkeypatch, capsys):
    """No --salt: the names' HMAC is keyed by the homework's secret (grader.grading.hidden.secret), not by nothing; the
    kit's default secret, known to all, is refused unless a --salt is given."""
    records_dir = tmp_path / "records"
    for name in ("alice", "bob"):
        class_report.write_record(records_dir, name, class_report.record_from_results(name, _results(PASS), []))
    monkeypatch.delenv(class_report.SALT_ENV, raising=False)
    key = tmp_path / "secret"
    key.write_text("секрет преподавателя\n", encoding="utf-8")
    monkeypatch.setenv(hidden.SECRET_ENV, str(key))
    assert class_report.main([str(records_dir), str(tmp_path / "a"), "--anonymize", "--tables"]) == 0
    data = json.loads((tmp_path / "a" / "report.json").read_text(encoding="utf-8"))
    names = [s["name"] for s in data["submissions"]]
    assert names == [class_report.anonymous(n, "секрет преподавателя") for n in ("alice", "bob")]
    assert class_report.anonymous("alice", "") not in names
    capsys.readouterr()
    monkeypatch.setenv(hidden.SECRET_ENV, str(tmp_path / "none"))  # no secret of one's own: the kit's default
    assert hidden.secret(homeworks.load(HW).tests_dir) == hidden.DEFAULT_SECRET
    assert class_report.main([str(records_dir), str(tmp_path / "b"), "--anonymize", "--tables"]) == 2
    assert "--salt" in capsys.readouterr().err and not (tmp_path / "b").exists()
    assert class_report.main([str(records_dir), str(tmp_path / "c"), "--anonymize", "--salt", "k", "--tables"]) == 0


# ---- the page's layout --------------------------------------------------------------------------------------------

LONG_REASON = ("ppo.py не загружается: SyntaxError в строке 12 — " + "незакрытая скобка в выражении преимущества, " * 5
               + "исправьте её и запустите проверку снова")  # 300 characters: the record used to cut at 200


def test_the_layout_keeps_reasons_whole_folds_checks_by_part_and_lets_histograms_wrap(tmp_path):
    """The «not graded» reason is quoted whole (or, past 400 characters, cut after a whole word with «…»); each
    part's checks sit in a <details> whose summary gives the part's pass rate; the histograms' container wraps and
    scales (no sideways scroll at 1280 px: docs/class-report.md says how the screenshot was taken)."""
    huge = "слово " * 200 + "конец"
    part = homeworks.load(HW).part("ppo")
    records = [class_report.record_from_results("alice", _results(GAE_LEAD, TD_FAIL, PASS), []),
               class_report.record_from_results("bob", [PartResult(part, [], error=LONG_REASON)], []),
               class_report.record_from_results("carol", [PartResult(part, [], error=huge)], [])]
    data = class_report.build_data(records)
    page = class_report.render(data, plots=False)
    parse_page(page)
    assert len(LONG_REASON) > 200 and f"ppo: {LONG_REASON}" in page
    cut = next(r["reason"] for r in data["overview"]["reasons"] if "слово" in r["reason"])
    assert cut.endswith(" …") and ("ppo: " + huge).startswith(cut[:-2]) and cut[:-2].endswith("слово")
    folds = re.findall(r'<details class="part" id="checks-(\w+)"><summary>(.*?)</summary>(.*?)</details>', page, re.S)
    assert [f[0] for f in folds] == ["ppo"] and "пройдено 33% (1/3)" in folds[0][1]
    assert all(f"<span class=\"muted\">{c['check']}</span>" in folds[0][2] for c in data["checks"])
    assert page.count('<span class="muted">test_') == len(data["checks"])  # no check outside its part's fold
    style = next(s for s in parse_page(page).styles)
    assert re.search(r"\.plots\{[^}]*flex-wrap:wrap", style) and re.search(r"\.plots svg\{[^}]*max-width:100%", style)
    assert re.search(r'<div class="plots">(<table class="hist">.*?</table>){2}</div>', page, re.S)
