"""What the class got wrong: ``python -m grader.reporting.class_report SOURCE OUT [--anonymize]``.

A report for instructors of a whole class's grading: ``OUT/index.html`` (self-contained, in Russian),
``OUT/report.json`` (the same data for scripts; its schema is ``grader/reporting/class_report.schema.json``) and
``OUT/mistakes.csv`` (one row per submission and typical mistake named). Nothing is graded again: the report is built
from the records grading already wrote.

- **The typical mistakes are those the students read.** A submission's named mistakes are the diagnoses
  («Похоже на типичную ошибку: …») of the very failures its feedback printed in full, each the field its check set on
  the checking side (``CheckResult.diagnosis``; never found in a text, which may quote the student's): for
  ``--batch``, the failures the scoreboard of ``<name>.txt`` shows in full
  (``grader.reporting.feedback.scoreboard(shown=...)``
  logs them, with their diagnosis, as it prints them); for Gradescope, the failed tests of results.json
  (``extra_data.mistakes``, written by ``grader.reporting.export.gradescope`` from those fields; a test whose visibility
  is ``hidden`` is never read, so it names nothing). A mistake the feedback did not name is not counted: a failure
  without a name is listed under «Ошибки без названия», by function. Records of an older form (a batch's record of
  version 1, a results.json without ``extra_data.format``), whose mistakes were read from the texts, are refused with
  what to do: grade again.
- **SOURCE** is either the records of a batch (``check.py HW --batch DIR --report OUT`` writes one JSON per
  submission to ``OUT/records/`` and builds the report from them), or a Gradescope export: the folder (or ``.zip``)
  that Gradescope's «Export Submissions» gives, ``submission_<id>/`` folders, each with the autograder's
  ``results.json``, and ``submission_metadata.yml`` for the students' names (read with PyYAML when it is installed,
  else by a small reader of its ``submission_<id>:`` keys and ``:name:`` lines); any folder of Gradescope
  ``results.json`` files (``<name>.json`` or ``<name>/results.json``) is read the same way.
- ``--anonymize``: every submission's name becomes a stable hash (``работа-`` and 10 hex digits of HMAC-SHA256 of
  the name, keyed by ``--salt``, or the environment's ``HWKIT_ANONYMIZE_SALT``, or else the instructor's secret of
  the homework, grader.grading.hidden.secret; the kit's default secret is refused): the same name gets the same hash in
  every report made with the same key. Every submission's name is scrubbed from the texts the report quotes. An
  anonymized report has no links to the feedback files (their names are the students').
- ``--lms canvas|moodle --roster FILE``: also the file that imports the class's grades into Canvas or Moodle
  (grader.reporting.lms; docs/lms-canvas.md, docs/lms-moodle.md), from the same records.
- Plots (score histograms) are drawn with matplotlib when it is installed, embedded as inline SVG; without it (or
  with ``--tables``), the same numbers are tables. The HTML loads nothing: no script, no style sheet, no font, no
  image from anywhere.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import hmac
import html
import io
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

from grader.base import escape
from grader.base.homeworks import UsageError
from grader.base.results import DIAGNOSIS, Totals, provenance
from grader.boundary.confine import LIMITS_ONLY
from grader.reporting import lms, similarity
from grader.reporting.export import RESULTS_FORMAT

RECORD = 2  # the version of a submission's record (OUT/records/<name>.json); 2: its mistakes are the checks' fields
SCHEMA = "hwkit-class-report/2"  # 2: the mistakes are the checks' fields (1 read them from texts)
SCHEMA_FILE = Path(__file__).resolve().parent / "class_report.schema.json"
SALT_ENV = "HWKIT_ANONYMIZE_SALT"
_NOT_RUN = ("todo", "load", "hung")  # a failure that is no mistake of the function: not written, not loaded, not run
_TIMEOUT = ("timeout", "hung")


# ---- the records: one per submission -----------------------------------------------------------------------

def record_from_results(name: str, results, shown: list[dict], feedback: str = "", kind: str = "", graded: str = "",
                        error: str = "", source: str = "batch", totals: Totals | None = None) -> dict:
    """A submission's record from what grading found (``results``: its PartResults, ``totals``: theirs, computed
    once by the caller, else here) and the failure texts its feedback printed in full (``shown``:
    ``grader.reporting.feedback.scoreboard(shown=...)``); ``feedback``: its feedback file, relative to the folder the
    record is written to."""
    parts = [{"id": r.part.id, "title": r.part.title, "points": r.part.points, "bonus_points": r.part.bonus_points,
              "score": round(r.score, 2), "bonus_score": round(r.bonus_score, 2),
              "error": escape.first_line(r.error) if r.error else ""} for r in results]
    checks = [{"part": r.part.id, "check": c.name, "title": c.title, "function": c.subject, "passed": c.passed,
               "kind": c.kind, "bonus": c.bonus} for r in results for c in r.checks]
    mistakes = [{"part": s["part"], "function": s["function"], "check": s["check"], "title": s["title"],
                 "text": s["diagnosis"], "told": s["text"]} for s in shown if s.get("diagnosis")]
    confinement = "; ".join(sorted({r.confinement for r in results if r.confinement}))
    record = _record(name, feedback, kind, graded, error, confinement, parts, checks, mistakes, source,
                     [[s["part"], s["function"]] for s in shown])
    if not error:  # the grade's one total, as the CSV and the feedback give it (not a sum of rounded parts)
        record["total"] = (totals or Totals.of(results)).score
    return {**record, **_provenance(results)}


def _provenance(results) -> dict:
    """Which rules graded (grader.base.results.provenance): ``inputs`` "hidden" (the grade for the record) or
    "public" (a self-check), the secret's fingerprint, the checks' version; all empty when nothing was graded."""
    return provenance(results) if results else {"inputs": "", "secret": "", "kit": ""}


def _record(name, feedback, kind, graded, error, confinement, parts, checks, mistakes, source, shown) -> dict:
    """``shown``: the (part, function) pairs whose failure the feedback printed in full (named or not)."""
    return {"record": RECORD, "source": source, "name": name, "feedback": feedback, "kind": kind, "graded": graded,
            "error": error, "confinement": confinement, "unconfined": LIMITS_ONLY in confinement,
            "total": round(sum(p["score"] for p in parts), 2) if not error else 0.0,
            "max": sum(p["points"] for p in parts), "parts": parts, "checks": checks, "mistakes": mistakes,
            "shown": [list(pair) for pair in dict.fromkeys(tuple(pair) for pair in shown)]}


_TITLE = re.compile(r"^\[[^\]]*\]\s*")


def record_from_gradescope(data: dict, name: str, feedback: str = "") -> dict:
    """A submission's record from its Gradescope ``results.json`` (``grader.reporting.export.gradescope``'s format);
    one the kit wrote in an older form is refused (:class:`OldRecords`)."""
    extra = data.get("extra_data") or {}
    if not isinstance(extra, dict):
        extra = {}
    if "mistakes" in extra and extra.get("format") != RESULTS_FORMAT:
        raise OldRecords(OLD_RESULTS.format(name=name))
    tests = [t for t in data.get("tests") or [] if isinstance(t, dict)]
    parts, errors = _gradescope_parts(extra, tests)
    checks = []
    for t in tests:
        info = t.get("extra_data") or {}
        if not info.get("check"):
            continue
        checks.append({"part": str(info.get("part", "")), "check": str(info["check"]),
                       "title": _TITLE.sub("", str(t.get("name", ""))), "function": str(info.get("subject", "")),
                       "passed": t.get("status") == "passed", "kind": str(info.get("kind", "")),
                       "bonus": bool(info.get("bonus"))})
    unread = {(str((t.get("extra_data") or {}).get("part")), str((t.get("extra_data") or {}).get("check")))
              for t in tests if t.get("visibility") == "hidden"}  # a test students never see names nothing
    told = {(str((t.get("extra_data") or {}).get("part")), str((t.get("extra_data") or {}).get("check"))):
            _fence(str(t.get("output", ""))) for t in tests}
    mistakes = []
    for m in extra.get("mistakes") or []:
        key = (str(m.get("part")), str(m.get("check")))
        text = str(m.get("text", ""))
        if key in unread or not text.startswith(DIAGNOSIS) or text not in told.get(key, ""):
            continue  # named only where the output the student reads says it
        mistakes.append({"part": key[0], "function": str(m.get("function", "")), "check": key[1],
                         "title": str(m.get("title", "")), "text": text, "told": told[key]})
    shown = [[c["part"], c["function"]] for c in checks if not c["passed"] and (c["part"], c["check"]) not in unread]
    record = _record(name, feedback, "gradescope", "", "", str(extra.get("confinement", "")), parts, checks, mistakes,
                     "gradescope", shown)
    if errors and not checks:
        record["error"] = "; ".join(errors)
    record.update({k: str(extra.get(k) or "") for k in ("inputs", "secret", "kit")})  # the autograder's provenance
    return record


def _gradescope_parts(extra: dict, tests: list[dict]) -> tuple[list[dict], list[str]]:
    """The parts of a Gradescope ``results.json`` (its ``extra_data``'s, scored from their ``tests``), and the first
    line of each part's error («part: line»)."""
    parts, errors = [], []
    for p in extra.get("parts") or []:
        own = [t for t in tests if (t.get("extra_data") or {}).get("part") == p.get("id")]
        failed = [t for t in own if (t.get("extra_data") or {}).get("kind") == "error" and t.get("status") != "passed"]
        said = escape.first_line(_fence(failed[0].get("output", ""))) if failed else ""
        if said:
            errors.append(f"{p.get('id')}: {said}")
        main = [t for t in own if not (t.get("extra_data") or {}).get("bonus")]
        bonus = [t for t in own if (t.get("extra_data") or {}).get("bonus")]
        parts.append({"id": str(p.get("id")), "title": str(p.get("title", "")), "points": float(p.get("points", 0)),
                      "bonus_points": float(p.get("bonus_points", 0) or 0),
                      "score": round(sum(float(t.get("score", 0)) for t in main), 2),
                      "bonus_score": round(sum(float(t.get("score", 0)) for t in bonus), 2), "error": said})
    return parts, errors


def _fence(output: str) -> str:
    """The text of a Markdown code block (grader.base.escape.code_block), else the text itself."""
    lines = output.strip().splitlines()
    if len(lines) >= 2 and re.fullmatch(r"`{3,}", lines[0]) and lines[-1] == lines[0]:
        return "\n".join(lines[1:-1])
    return output.strip()


def write_record(folder: Path, stem: str, record: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.json").write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")


# ---- reading a source: a batch's records, or a Gradescope export --------------------------------------------

class OldRecords(ValueError):
    """Records of an older form, whose typical mistakes were found in the texts of the feedback: refused."""


OLD_RECORDS = ("записи пакетной проверки в {folder} — прежнего вида (версия {version}): типичные ошибки в них найдены "
               "по тексту отзыва, а его может подделать текст самой работы. Проверьте работы заново этой версией "
               "набора: python homework/check.py <домашняя работа> --batch <папка работ> --report <папка отчёта> "
               "(старые записи из {folder} удалите).")
OLD_RESULTS = ("results.json работы «{name}» записан прежней версией набора: типичные ошибки в нём найдены по тексту "
               "отзыва, а его может подделать текст самой работы. Проверьте работы в Gradescope заново (Regrade "
               "All Submissions) с автопроверкой этой версии (python -m grader.gradescope) и выгрузите их снова.")

_EXTRACTED: list[Path] = []  # the folders a .zip export was extracted into: removed when the report is written


def read_source(source: Path) -> tuple[list[dict], Path]:
    """The records of ``source`` (a batch's records folder, a Gradescope export folder or .zip, a folder of
    results.json files), sorted by name, and the folder their feedback links are relative to. A .zip is extracted
    into a temporary folder, which :func:`main` removes when it is done (the code compared is read from it)."""
    if source.is_file() and source.suffix == ".zip":
        tmp = Path(tempfile.mkdtemp(prefix="hwreport-"))
        _EXTRACTED.append(tmp)
        with zipfile.ZipFile(source) as zf:
            for info in zf.infolist():  # results, metadata and the code compared (grader.reporting.similarity), no more
                name = info.filename
                code = name.endswith((".py", ".ipynb")) and info.file_size <= similarity.MAX_BYTES
                if (code or name.endswith(("results.json", "submission_metadata.yml"))) and not info.is_dir() \
                        and ".." not in Path(name).parts and not name.startswith("/"):
                    zf.extract(info, tmp)
        return read_source(tmp)[0], source.parent
    if not source.is_dir():
        raise FileNotFoundError(f"нет папки или архива {source}")
    records = []
    for path in sorted(source.glob("*.json")):
        data = _load(path)
        if isinstance(data, dict) and data.get("record") == RECORD:
            records.append(data)
        elif isinstance(data, dict) and type(data.get("record")) is int:
            raise OldRecords(OLD_RECORDS.format(folder=escape.name(str(source)), version=data["record"]))
    if records:
        return sorted(records, key=lambda r: r["name"].lower()), source
    root = _export_root(source)
    names = _metadata_names(root / "submission_metadata.yml")
    emails = _metadata_emails(root / "submission_metadata.yml")
    found = []
    for path in sorted(root.iterdir(), key=lambda p: p.name.lower()):
        if path.is_symlink():
            continue
        results = path / "results.json" if path.is_dir() else path if path.suffix == ".json" else None
        if results is None or not results.is_file():
            continue
        data = _load(results)
        if isinstance(data, dict) and isinstance(data.get("tests"), list):
            label = names.get(path.name) or escape.name(path.stem if path.is_file() else path.name)
            found.append(record_from_gradescope(data, label, os.path.relpath(results, source)))
            found[-1]["emails"] = emails.get(path.name, [])  # the submitters' e-mails: a roster may name them
            if path.is_dir():
                # the submission's files: its code is compared (grader.reporting.similarity)
                found[-1]["folder"] = str(path)
    if not found:
        raise FileNotFoundError(f"в {source} нет ни записей пакетной проверки (--batch ... --report), ни results.json "
                                "выгрузки Gradescope (submission_<id>/results.json)")
    return sorted(found, key=lambda r: r["name"].lower()), source


def _load(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _export_root(folder: Path) -> Path:
    """The export's own folder (``assignment_<id>_export/``) when ``folder`` holds just that one."""
    entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir() and not (entries[0] / "results.json").is_file():
        return entries[0]
    return folder


def _metadata_names(path: Path) -> dict[str, str]:
    """``submission_<id>`` -> the submitters' names, from Gradescope's ``submission_metadata.yml``."""
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        import yaml  # optional: PyYAML is not a dependency of the kit

        data = yaml.safe_load(text)
        out = {}
        for key, value in (data or {}).items():
            people = (value or {}).get(":submitters") or (value or {}).get("submitters") or []
            who = [str(p.get(":name") or p.get("name") or "") for p in people if isinstance(p, dict)]
            if any(who):
                out[str(key)] = escape.name(", ".join(w for w in who if w))
        return out
    except Exception:  # noqa: BLE001 - no PyYAML, or a file it cannot read: the small reader below
        pass
    out: dict[str, list[str]] = {}
    key = None
    for line in text.splitlines():
        top = re.match(r"^(submission_\d+):\s*$", line)
        if top:
            key = top.group(1)
        elif key and re.match(r"^\s*-?\s*:name:\s*(.+)$", line):
            out.setdefault(key, []).append(re.match(r"^\s*-?\s*:name:\s*(.+)$", line).group(1).strip().strip("'\""))
    return {k: escape.name(", ".join(v)) for k, v in out.items()}


def _metadata_emails(path: Path) -> dict[str, list[str]]:
    """``submission_<id>`` -> its submitters' e-mails (``:email:`` lines of ``submission_metadata.yml``), as text."""
    out: dict[str, list[str]] = {}
    key = None
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    for line in text.splitlines():
        top = re.match(r"^(submission_\d+):\s*$", line)
        email = re.match(r"^\s*-?\s*:email:\s*(.+)$", line)
        if top:
            key = top.group(1)
        elif key and email:
            out.setdefault(key, []).append(escape.name(email.group(1).strip().strip("'\"")))
    return out


# ---- the report's data ----------------------------------------------------------------------------------------

def anonymous(name: str, salt: str = "") -> str:
    return "работа-" + hmac.new(salt.encode("utf-8"), name.encode("utf-8", "surrogateescape"),
                                hashlib.sha256).hexdigest()[:10]


def _scrubber(records: list[dict]):
    """A text with every submission's name (and a Gradescope submitter's e-mail) in it replaced by "…": what an
    anonymized report quotes (a reason, a mistake's text) names no one, whoever's record it came from."""
    names = sorted({n for r in records for n in [r["name"], *r.get("emails", [])] if n}, key=len, reverse=True)

    def scrub(text: str) -> str:
        for name in names:
            text = text.replace(name, "…")
        return text
    return scrub


def _histogram(values: list[float], top: float, bins: int = 10) -> list[dict]:
    top = top or 1.0
    width = top / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int(v / width + 1e-9)))] += 1
    return [{"from": round(i * width, 2), "to": round((i + 1) * width, 2), "count": n} for i, n in enumerate(counts)]


def _stats(values: list[float]) -> dict:
    return {"mean": round(statistics.fmean(values), 2) if values else 0.0,
            "median": round(statistics.median(values), 2) if values else 0.0}


def build_data(records: list[dict], links: dict[str, str] | None = None, anonymize: bool = False,
               salt: str = "", homework: str = "", alike: dict | None = None) -> dict:
    """report.json's content from the submissions' records; ``links``: a record's name -> its feedback file's link
    from the report (none when anonymized); ``alike``: the alike pairs of grader.reporting.similarity (none: no
    section)."""
    names = {r["name"]: anonymous(r["name"], salt) if anonymize else r["name"] for r in records}
    links = {} if anonymize else (links or {})
    scrub = _scrubber(records) if anonymize else (lambda text: text)
    graded = [r for r in records if r["checks"]]
    n_graded = len(graded)
    part_meta: dict[str, dict] = {}
    for r in records:
        for p in r["parts"]:
            part_meta.setdefault(p["id"], {"id": p["id"], "title": p["title"], "points": p["points"]})
    ranked = _mistake_rows(records, names, scrub, n_graded)
    mistake_id = {(e["part"], e["function"], e["text"]): e["id"] for e in ranked}
    check_rows = _check_rows(graded, scrub, {pid: i for i, pid in enumerate(part_meta)})
    titles = {(e["part"], e["check"]): e["title"] for e in check_rows}
    submissions = [_submission_row(r, names, links, scrub, mistake_id) for r in records]
    extra = {"alike": _alike(alike, names, links, scrub)} if alike is not None else {}
    return {"schema": SCHEMA, "homework": homework, "anonymized": anonymize, **extra,
            "overview": _overview(records, names, scrub, part_meta, n_graded, submissions),
            "mistakes": ranked, "checks": check_rows, "unnamed": _unnamed_rows(graded, names, titles, n_graded),
            "submissions": submissions}


def _overview(records: list[dict], names: dict[str, str], scrub, part_meta: dict[str, dict], n_graded: int,
              submissions: list[dict]) -> dict:
    """The report's overview: how many submissions were graded, why the others were not, the totals' and each
    part's statistics and histograms."""
    timed = [r for r in records if r["checks"] and any(c["kind"] in _TIMEOUT for c in r["checks"])]
    totals = [r["total"] for r in records]
    top = max((r["max"] for r in records), default=0.0)
    parts = []
    for pid, meta in part_meta.items():
        scores = [p["score"] for r in records for p in r["parts"] if p["id"] == pid]
        parts.append({**meta, **_stats(scores), "histogram": _histogram(scores, meta["points"])})
    return {"submissions": len(records), "graded": n_graded, "unconfined": sum(r["unconfined"] for r in records),
            "timed_out": len(timed), "not_graded": sum(1 for s in submissions if s["error"]),
            "reasons": _reasons(records, names, scrub), "max": top, **_stats(totals),
            "histogram": _histogram(totals, top), "parts": parts}


def _reasons(records: list[dict], names: dict[str, str], scrub) -> list[dict]:
    """Why submissions (or their parts) were not graded: each reason's first line, most common first, with the
    submissions it was said of."""
    reasons: Counter = Counter()
    who_reason: dict[str, list[str]] = {}
    for r in records:
        why = [r["error"]] if r["error"] else [f"{p['id']}: {p['error']}" for p in r["parts"] if p["error"]]
        for w in why:
            # "в папке alice не найдено работы": one reason for all, and no name in an anonymized report
            reason = scrub(w.splitlines()[0].replace(r["name"], "…"))
            reasons[reason] += 1
            who_reason.setdefault(reason, []).append(names[r["name"]])
    return [{"reason": k, "count": v, "submissions": who_reason[k]} for k, v in reasons.most_common()]


def _mistake_rows(records: list[dict], names: dict[str, str], scrub, n_graded: int) -> list[dict]:
    """The mistakes named, each counted once per submission, the most common first, numbered m1, m2, …"""
    mistakes: dict[tuple, dict] = {}
    for r in records:
        for m in r["mistakes"]:
            key = (m["part"], m["function"], scrub(m["text"]))
            entry = mistakes.setdefault(key, {"part": m["part"], "function": m["function"], "text": scrub(m["text"]),
                                              "told": scrub(m["told"]), "checks": [], "submissions": []})
            if m["check"] not in entry["checks"]:
                entry["checks"].append(m["check"])
            if names[r["name"]] not in entry["submissions"]:
                entry["submissions"].append(names[r["name"]])
    ranked = sorted(mistakes.values(), key=lambda e: (-len(e["submissions"]), e["part"], e["function"], e["text"]))
    for i, e in enumerate(ranked, 1):
        e.update(id=f"m{i}", count=len(e["submissions"]), share=round(len(e["submissions"]) / n_graded, 4)
                 if n_graded else 0.0)
    return ranked


def _check_rows(graded: list[dict], scrub, order: dict[str, int]) -> list[dict]:
    """The checks: pass rates over the graded submissions, hardest first (``order``: the parts' places)."""
    checks: dict[tuple, dict] = {}
    for r in graded:
        for c in r["checks"]:
            e = checks.setdefault((c["part"], c["check"]), {"id": f"{c['part']}::{c['check']}", "part": c["part"],
                                                             "check": c["check"], "title": scrub(c["title"]),
                                                             "function": c["function"], "bonus": c["bonus"],
                                                             "runs": 0, "passed": 0, "timeouts": 0})
            e["runs"] += 1
            e["passed"] += bool(c["passed"])
            e["timeouts"] += c["kind"] == "timeout"
    check_rows = sorted(checks.values(), key=lambda e: (e["passed"] / e["runs"], order.get(e["part"], 0), e["id"]))
    for e in check_rows:
        e["pass_rate"] = round(e["passed"] / e["runs"], 4)
    return check_rows


def _unnamed_rows(graded: list[dict], names: dict[str, str], titles: dict[tuple, str], n_graded: int) -> list[dict]:
    """Failures of functions whose feedback was printed in full without naming a mistake (a function that only calls
    a failed one is told "fix that first": not its own mistake), the most common first; ``titles``: each (part,
    check)'s title."""
    unnamed: dict[tuple, dict] = {}
    for r in graded:
        named = {(m["part"], m["function"]) for m in r["mistakes"]}
        shown = {tuple(pair) for pair in r.get("shown", [])}
        for c in r["checks"]:
            key = (c["part"], c["function"])
            if c["passed"] or c["kind"] in _NOT_RUN or key in named or key not in shown:
                continue
            e = unnamed.setdefault((c["part"], c["function"]), {"part": c["part"], "function": c["function"],
                                                                "submissions": [], "checks": {}, "kinds": Counter()})
            if names[r["name"]] not in e["submissions"]:
                e["submissions"].append(names[r["name"]])
            e["checks"][c["check"]] = e["checks"].get(c["check"], 0) + 1
            e["kinds"][c["kind"] or "check"] += 1
    unnamed_rows = []
    for e in sorted(unnamed.values(), key=lambda e: (-len(e["submissions"]), e["part"], e["function"])):
        unnamed_rows.append({"part": e["part"], "function": e["function"], "count": len(e["submissions"]),
                             "share": round(len(e["submissions"]) / n_graded, 4) if n_graded else 0.0,
                             "submissions": e["submissions"], "kinds": dict(e["kinds"]),
                             "checks": [{"check": k, "title": titles[(e["part"], k)], "failed": v}
                                        for k, v in sorted(e["checks"].items(), key=lambda kv: -kv[1])]})
    return unnamed_rows


def _submission_row(r: dict, names: dict[str, str], links: dict[str, str], scrub, mistake_id: dict) -> dict:
    """A submission's line in the report: its name (a hash when anonymized), scores, and the mistakes and checks it
    failed."""
    return {"name": names[r["name"]], "feedback": links.get(r["name"], ""), "total": r["total"], "max": r["max"],
            "parts": {p["id"]: p["score"] for p in r["parts"]}, "graded": bool(r["checks"]),
            "error": bool(r["error"] or any(p["error"] for p in r["parts"])),
            "unconfined": r["unconfined"], "passed": sum(bool(c["passed"]) for c in r["checks"]),
            "checks": len(r["checks"]),
            "mistakes": sorted({mistake_id[(m["part"], m["function"], scrub(m["text"]))] for m in r["mistakes"]},
                               key=lambda i: int(i[1:])),
            "failed": [f"{c['part']}::{c['check']}" for c in r["checks"] if not c["passed"]]}


def _alike(alike: dict, names: dict[str, str], links: dict[str, str], scrub) -> dict:
    """The section «Похожие работы»: grader.reporting.similarity's pairs under the report's names (hashes when
    anonymized), with links to both feedback files (none when anonymized) and the quoted code scrubbed of every name."""
    pairs = [{"a": names[p["a"]], "b": names[p["b"]], "feedback": [links.get(p["a"], ""), links.get(p["b"], "")],
              "share": p["share"], "shares": p["shares"],
              "regions": [{side: {**q[side], "where": scrub(q[side]["where"]), "text": scrub(q[side]["text"])}
                           for side in ("a", "b")} for q in p["regions"]]}
             for p in alike["pairs"] if p["a"] in names and p["b"] in names]
    return {**{k: alike[k] for k in ("available", "compared", "threshold", "more", "message")}, "pairs": pairs}


# ---- writing it -------------------------------------------------------------------------------------------------

def build(records: list[dict], out: Path, links: dict[str, str] | None = None, anonymize: bool = False,
          salt: str = "", plots: bool | None = None, homework: str = "", alike: dict | None = None) -> dict:
    """Write ``out/index.html``, ``out/report.json`` and ``out/mistakes.csv``; return the report's data.
    ``plots``: None draws with matplotlib when it is installed, False never; ``alike``:
    grader.reporting.similarity.for_class."""
    out.mkdir(parents=True, exist_ok=True)
    data = build_data(records, links, anonymize, salt, homework, alike)
    (out / "report.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    by_id = {m["id"]: m for m in data["mistakes"]}
    rows = [{"submission": s["name"], "part": by_id[i]["part"], "function": by_id[i]["function"],
             "mistake": by_id[i]["text"], "checks": " ".join(by_id[i]["checks"]), "share": by_id[i]["share"]}
            for s in data["submissions"] for i in s["mistakes"]]
    with open(out / "mistakes.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["submission", "part", "function", "mistake", "checks", "share"])
        writer.writeheader()
        writer.writerows({k: escape.csv_cell(v) for k, v in row.items()} for row in rows)
    (out / "index.html").write_text(render(data, plots), encoding="utf-8")
    return data


def _e(text) -> str:
    """Text for HTML: controls escaped (grader.base.escape), then HTML-escaped."""
    return html.escape(escape.printable(str(text), "\n"), quote=True)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _num(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _who(names: list[str], links: dict[str, str]) -> str:
    items = [f'<a href="{_e(links[n])}">{_e(n)}</a>' if links.get(n) else _e(n) for n in names]
    return ", ".join(items)


def _plots_available(plots: bool | None) -> bool:
    if plots is False:
        return False
    try:
        import matplotlib  # noqa: F401 - optional: not a dependency of the kit
    except ImportError:
        return False
    return True


def _svg(histograms: list[tuple[str, list[dict]]]) -> str:
    """The histograms as one inline SVG drawn by matplotlib (no metadata, no links, no fonts from outside)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.fonttype"] = "path"  # the glyphs as paths: no font to load
    n = len(histograms)
    cols = min(4, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.3 * rows), squeeze=False)
    for ax, (title, hist) in zip(axes.flat, histograms):
        ax.bar([h["from"] for h in hist], [h["count"] for h in hist], width=[h["to"] - h["from"] for h in hist],
               align="edge", color="#4a78b5", edgecolor="white")
        ax.set_title(title, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.set_xlim(hist[0]["from"], hist[-1]["to"])
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _hist_table(title: str, hist: list[dict]) -> str:
    top = max((h["count"] for h in hist), default=0) or 1
    rows = "".join(f'<tr><td class="n">{_num(h["from"])}–{_num(h["to"])}</td><td class="n">{h["count"]}</td>'
                   f'<td><span class="bar" style="width:{100 * h["count"] / top:.0f}%"></span></td></tr>'
                   for h in hist)
    return f'<table class="hist"><caption>{_e(title)}</caption>{rows}</table>'


STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.2em}td,th{border:1px solid #ccc;padding:.2em .5em;vertical-align:top;
text-align:left}th{background:#f2f2f2}td.n{text-align:right;white-space:nowrap}pre{white-space:pre-wrap;margin:.3em 0;
font-size:.85em;background:#f7f7f7;padding:.4em}.hist{display:inline-table;margin-right:1em}.hist td{border:none}
.bar{display:inline-block;height:.8em;background:#4a78b5;min-width:1px}details summary{cursor:pointer}
.muted{color:#666}caption{font-weight:bold;text-align:left}
.plots{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:flex-start}.plots svg{max-width:100%;height:auto}
.plots .hist{margin:0}details.part{margin:.3em 0}details.part>summary{padding:.2em 0}
"""


def render(data: dict, plots: bool | None = None) -> str:
    """index.html from report.json's content: the overview, the class's mistakes, the checks, the failures no
    mistake named, the alike submissions; ``plots``: the histograms drawn by matplotlib (None: where it is)."""
    o = data["overview"]
    links = {s["name"]: s["feedback"] for s in data["submissions"] if s["feedback"]}
    title = f"Ошибки класса{': ' + data['homework'] if data['homework'] else ''}"
    h: list[str] = [f'<!DOCTYPE html>\n<html lang="ru"><head><meta charset="utf-8"><title>{_e(title)}</title>'
                    f"<style>{STYLE}{ALIKE_STYLE}</style></head><body>", f"<h1>{_e(title)}</h1>"]
    if data["anonymized"]:
        h.append('<p class="muted">Имена заменены хешами (--anonymize).</p>')
    h += _overview_html(o, links)
    h += _distribution_html(o, plots)
    h += _mistakes_html(data["mistakes"], o["graded"], links)
    h.append("<h2>Проверки</h2><p>По частям (раскройте часть): доля проверенных работ, прошедших каждую проверку; "
             "самые трудные — первыми. «Лимит» — сколько раз проверка превысила лимит времени.</p>")
    h += _checks_by_part(data["checks"], [p["id"] for p in o["parts"]])
    h += _unnamed_html(data["unnamed"], links)
    if data.get("alike"):
        h.append(_alike_html(data["alike"]))
    h.append('<p class="muted">Данные для скриптов: report.json (схема grader/reporting/class_report.schema.json), '
             "mistakes.csv.</p></body></html>\n")
    return "\n".join(h)


def _overview_html(o: dict, links: dict[str, str]) -> list[str]:
    """The section «Обзор»: the counts and the mean and median, then why submissions were not graded."""
    h = ["<h2>Обзор</h2><table>"]
    for label, value in [("Работ", o["submissions"]), ("Проверено (есть результаты проверок)", o["graded"]),
                         ("Проверено без изоляции (без пространств имён)", o["unconfined"]),
                         ("С превышением лимита времени хотя бы в одной проверке", o["timed_out"]),
                         ("Не проверено целиком или частично", o["not_graded"]),
                         ("Средний балл (непроверенная работа — 0, как в CSV)",
                          f"{_num(o['mean'])} из {_num(o['max'])}"),
                         ("Медиана", f"{_num(o['median'])} из {_num(o['max'])}")]:
        h.append(f'<tr><th>{_e(label)}</th><td class="n">{_e(value)}</td></tr>')
    h.append("</table>")
    if o["reasons"]:
        h.append("<table><tr><th>Почему не проверено</th><th>Работ</th><th>Какие</th></tr>")
        h += [f'<tr><td>{_e(r["reason"])}</td><td class="n">{r["count"]}</td><td>{_who(r["submissions"], links)}</td>'
              f"</tr>" for r in o["reasons"]]
        h.append("</table>")
    return h


def _distribution_html(o: dict, plots: bool | None) -> list[str]:
    """«Распределение баллов»: the totals' and each part's histogram, as SVG or as tables."""
    histograms = [(f"Итого (из {_num(o['max'])})", o["histogram"])] + [
        (f"{p['id']} (из {_num(p['points'])}; среднее {_num(p['mean'])}, медиана {_num(p['median'])})", p["histogram"])
        for p in o["parts"]]
    h = ["<h3>Распределение баллов</h3>"]
    # .plots wraps and scales (STYLE): the histograms never make the page scroll sideways
    if _plots_available(plots):
        h.append(f'<div class="plots">{_svg(histograms)}</div>')
    else:
        h.append('<div class="plots">' + "".join(_hist_table(t, hist) for t, hist in histograms) + "</div>")
    return h


def _mistakes_html(mistakes: list[dict], n: int, links: dict[str, str]) -> list[str]:
    """The section «Ошибки класса»: each named mistake, its share of the ``n`` graded submissions, the feedback
    that named it and who got it."""
    h = [f"<h2>Ошибки класса</h2><p>Типичные ошибки, которые назвал отзыв студента («{_e(DIAGNOSIS)}: …»), по доле "
         f"проверенных работ ({n}), чей отзыв её назвал. Текст — как его прочитал студент (первой из работ).</p>"]
    if not mistakes:
        return h + ["<p>Ни один отзыв не назвал типичную ошибку.</p>"]
    h.append("<table><tr><th>Доля</th><th>Часть / функция</th><th>Ошибка и отзыв</th><th>Работы</th></tr>")
    for m in mistakes:
        h.append(f'<tr id="{m["id"]}"><td class="n">{_pct(m["share"])}<br>{m["count"]}</td>'
                 f'<td>{_e(m["part"])}<br><code>{_e(m["function"] or "—")}</code></td>'
                 f'<td>{_e(m["text"])}<details><summary>отзыв</summary><pre>{_e(m["told"])}</pre></details></td>'
                 f'<td><details><summary>{m["count"]}</summary>{_who(m["submissions"], links)}</details></td></tr>')
    return h + ["</table>"]


def _unnamed_html(unnamed: list[dict], links: dict[str, str]) -> list[str]:
    """The section «Ошибки без названия»: failed checks of functions whose feedback named no mistake."""
    h = ["<h2>Ошибки без названия</h2><p>Непройденные проверки функций, отзыв о которых напечатан полностью, но "
         "типичной ошибки не назвал (кроме TODO, незагрузившегося модуля, проверок, не запущенных после зависания, "
         "и функций, которым отзыв велел сначала исправить вызываемую): здесь каталогу типичных ошибок стоит "
         "расти.</p>"]
    if not unnamed:
        return h + ["<p>Нет.</p>"]
    h.append("<table><tr><th>Работ</th><th>Часть / функция</th><th>Проверки (сколько раз не пройдены)</th>"
             "<th>Работы</th></tr>")
    for u in unnamed:
        checks = "<br>".join(f'{_e(c["title"])} <span class="muted">{_e(c["check"])}</span>: {c["failed"]}'
                             for c in u["checks"][:12])
        more = f'<br><span class="muted">… ещё {len(u["checks"]) - 12}</span>' if len(u["checks"]) > 12 else ""
        h.append(f'<tr><td class="n">{_pct(u["share"])}<br>{u["count"]}</td><td>{_e(u["part"])}<br>'
                 f'<code>{_e(u["function"] or "—")}</code></td><td>{checks}{more}</td>'
                 f'<td><details><summary>{u["count"]}</summary>{_who(u["submissions"], links)}</details></td></tr>')
    return h + ["</table>"]


def _checks_by_part(checks: list[dict], order: list[str]) -> list[str]:
    """The checks table folded by part: a <details> per part (in the homework's order), its summary the part's pass
    rate over all its checks' runs and how many of its checks some submission failed."""
    out = []
    for part in order + sorted({c["part"] for c in checks} - set(order)):
        mine = [c for c in checks if c["part"] == part]
        if not mine:
            continue
        passed, runs = sum(c["passed"] for c in mine), sum(c["runs"] for c in mine)
        failed = sum(1 for c in mine if c["passed"] < c["runs"])
        rate = f"{_pct(passed / runs)} ({passed}/{runs})" if runs else "не запускались"
        out.append(f'<details class="part" id="checks-{_e(part)}"><summary><b>{_e(part)}</b>: пройдено {rate} '
                   f"запусков; проверок {len(mine)}, не пройдены хотя бы одной работой: {failed}</summary>"
                   "<table><tr><th>Пройдено</th><th>Функция</th><th>Проверка</th><th>Лимит</th></tr>")
        out += [f'<tr><td class="n">{_pct(c["pass_rate"])} ({c["passed"]}/{c["runs"]})</td>'
                f'<td><code>{_e(c["function"] or "—")}</code></td><td>{_e(c["title"])}'
                f'{" (бонус)" if c["bonus"] else ""}<br><span class="muted">{_e(c["check"])}</span></td>'
                f'<td class="n">{c["timeouts"] or ""}</td></tr>' for c in mine]
        out.append("</table></details>")
    return out


ALIKE_STYLE = """
table.alike{table-layout:fixed;width:100%}table.alike td{width:50%}table.alike pre{white-space:pre;overflow-x:auto;
max-height:30em}
"""


def _alike_html(alike: dict) -> str:
    """The section «Похожие работы»: each pair above the threshold, its share and its matching regions side by side."""
    h = ['<h2 id="alike">Похожие работы</h2>']
    if alike["message"]:
        return "\n".join(h + [f"<p>{_e(alike['message'])}</p>"])
    h.append(f"<p>Пары работ, чей код совпадает сверх того, что уже есть в заготовках (модули-заготовки и готовые "
             f"ячейки тетрадки не в счёт), с долей совпадения от {_pct(alike['threshold'])}; сравнено работ: "
             f"{alike['compared']}. Доля — часть кода той работы пары, у которой совпадает меньше (отпечатки "
             f"copydetect, как у MOSS: переименованные переменные и переставленные функции их не меняют). Похожесть — "
             f"повод посмотреть код, а не вывод о списывании.</p>")
    if not alike["pairs"]:
        h.append("<p>Похожих пар нет.</p>")
    for p in alike["pairs"]:
        who = [f'{_e(n)} (<a href="{_e(link)}">отзыв</a>)' if link else _e(n) for n, link in zip((p["a"], p["b"]),
                                                                                                 p["feedback"])]
        shares = " / ".join(_pct(s) for s in p["shares"])
        rows = "".join(f'<tr><td><span class="muted">{_e(q["a"]["where"])}, строки {q["a"]["from"]}–{q["a"]["to"]}'
                       f'</span><pre>{_e(q["a"]["text"])}</pre></td><td><span class="muted">{_e(q["b"]["where"])}, '
                       f'строки {q["b"]["from"]}–{q["b"]["to"]}</span><pre>{_e(q["b"]["text"])}</pre></td></tr>'
                       for q in p["regions"])
        summary = f"{_pct(p['share'])}: {who[0]} и {who[1]} <span class=\"muted\">(у каждой: {shares})</span>"
        h.append(f"<details><summary>{summary}</summary><table class=\"alike\"><tr><th>{who[0]}</th><th>{who[1]}</th>"
                 f"</tr>{rows}</table></details>" if rows else
                 f"<p>{summary} <span class=\"muted\">(совпадающий код показан для первых {similarity.MAX_QUOTED} "
                 f"пар)</span></p>")
    if alike["more"]:
        h.append(f'<p class="muted">… и ещё пар выше порога: {alike["more"]} (показаны первые '
                 f'{len(alike["pairs"])}).</p>')
    return "\n".join(h)


def homework_of(records: list[dict], homework: str = "") -> str:
    """The homework the records are of: ``homework`` when the kit has it, else the one whose parts they name ("" when
    none or several)."""
    from grader.base import homeworks

    ids = {p["id"] for r in records for p in r["parts"]}
    names = [homework] if homework in homeworks.available() else \
        [n for n in homeworks.available() if ids and ids <= {p.id for p in homeworks.load(n).parts}]
    return names[0] if len(names) == 1 else ""


def instructor_salt(records: list[dict], homework: str = "") -> str:
    """The key of --anonymize's hashes when no --salt is given: the instructor's secret (grader.grading.hidden.secret)
    of the homework the records are of (``homework``, or the one whose parts they name). The kit's default secret is
    public, so it is refused: without a secret of one's own, a --salt is needed."""
    from grader.base import homeworks
    from grader.grading import hidden
    name = homework_of(records, homework)
    if not name:
        raise UsageError("--anonymize без --salt: не понять, какой домашней работы записи (её секрет — ключ хешей); "
                         "укажите --homework <домашняя работа> или --salt <ключ>")
    key = hidden.secret(homeworks.load(name).tests_dir)
    if key == hidden.DEFAULT_SECRET:
        raise UsageError(f"--anonymize без --salt: у {name} нет своего секрета (python -m grader.grading.secret), а "
                         "секрет набора по умолчанию известен всем — хеши по нему сопоставит с именами любой. "
                         "Задайте секрет или --salt <ключ>")
    return key


def links_for(records: list[dict], records_dir: Path, out: Path) -> dict[str, str]:
    """A record's name -> its feedback file as a link from the report in ``out`` (relative, '/'-separated)."""
    links = {}
    for r in records:
        if r.get("feedback"):
            target = (records_dir / r["feedback"]).resolve()
            links[r["name"]] = Path(os.path.relpath(target, out.resolve())).as_posix()
    return links


def main(argv: list[str] | None = None) -> int:
    """The command line; the students' files a .zip export held never stay behind in the temporary folder."""
    try:
        return _main(argv)
    finally:
        while _EXTRACTED:
            shutil.rmtree(_EXTRACTED.pop(), ignore_errors=True)


def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.reporting.class_report",
                                description="Отчёт об ошибках класса из записей пакетной проверки или выгрузки "
                                            "Gradescope (ничего не проверяется заново).")
    p.add_argument("source", help="папка записей (OUT/records после --batch ... --report OUT) или выгрузка Gradescope "
                                  "(папка или .zip с submission_<id>/results.json)")
    p.add_argument("out", help="куда записать index.html, report.json, mistakes.csv")
    p.add_argument("--anonymize", action="store_true", help="заменить имена стабильными хешами")
    p.add_argument("--salt", default=os.environ.get(SALT_ENV) or None,
                   help=f"ключ хешей --anonymize (или {SALT_ENV}); без него — секрет преподавателя домашней работы")
    p.add_argument("--tables", action="store_true", help="без графиков matplotlib: распределения таблицами")
    p.add_argument("--homework", default="", help="имя домашней работы для заголовка")
    p.add_argument("--code", metavar="DIR", help="папка работ, которую проверяла пакетная проверка: сравнить их код "
                                                 "(раздел «Похожие работы»; выгрузка Gradescope сравнивается сама)")
    lms.add_options(p)
    args = p.parse_args(argv)
    started = time.perf_counter()
    try:
        export_to = lms.from_args(args, Path(args.out), args.homework)  # the roster is checked before anything
        if export_to and args.anonymize:
            raise UsageError("--lms с --anonymize: файл для LMS называет студентов; постройте его отдельной "
                             "командой, без --anonymize")
        records, base = read_source(Path(args.source))
        salt = args.salt if args.salt is not None or not args.anonymize else instructor_salt(records, args.homework)
        if args.code and not Path(args.code).is_dir():
            raise FileNotFoundError(f"--code: нет папки {args.code}")
    except (FileNotFoundError, OldRecords, UsageError) as exc:
        print(f"ошибка: {exc}", file=sys.stderr)
        return 2
    from grader.base import homeworks

    out = Path(args.out)
    name = homework_of(records, args.homework)
    alike = similarity.for_class(records, homeworks.load(name) if name else None,
                                 Path(args.code) if args.code else None)
    data = build(records, out, links_for(records, base, out), args.anonymize, salt or "",
                 False if args.tables else None, args.homework, alike)
    print(f"отчёт: {out / 'index.html'} — работ {len(records)}, названных ошибок {len(data['mistakes'])}, "
          f"{time.perf_counter() - started:.1f} с")
    return lms.write(export_to, records, args.homework) if export_to else 0


if __name__ == "__main__":
    sys.exit(main())
