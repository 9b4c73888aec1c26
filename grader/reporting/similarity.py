"""Alike submissions of a class: which pairs share code beyond what the stubs already share (the class report's
section «Похожие работы»).

The fingerprints are copydetect's (an optional extra, ``pip install -e ".[report]"``): each submission's code is
tokenized by pygments (names become ``V``/``F``, strings ``S``, comments and spaces go), its k-grams hashed and
winnowed, as MOSS does; a renamed variable or a function moved elsewhere changes nothing of that. What the kit's
stubs and the notebook's provided cells hold is boilerplate: its fingerprints are dropped before anything is
compared, so a class that kept the stubs' signatures, docstrings and helpers is not alike for that.

A submission's code is what grading graded (grader.grading.submissions.locate): its part modules, in the order of the
parts, or its notebook's code cells; read as data (regular files only, no link followed, at most ``MAX_BYTES`` each),
never imported or run. The share of a pair is copydetect's similarity (the part of a submission's fingerprinted code
that the other one also has) of the submission that shares less: a small submission inside a big one is not listed for
that alone. Pairs at or above ``THRESHOLD`` are listed, highest first, with their matching regions: each region of the
first submission beside the region of the second that holds most of the same fingerprints, as the kit quotes them (the
report escapes them; copydetect's own HTML report is never used).
"""
from __future__ import annotations

import io
import os
import stat
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from grader.base import escape
from grader.base.homeworks import ROOT, Homework

# The share from which a pair is listed. benchmarks/class_report.py --alike: 500 submissions made from the reference
# or the loop-heavy variant with 1-3 mistakes of the catalogue and renamed variables, functions reordered; a pair of
# one origin is a disguised copy, a pair of the two is honest, independent work. Of every pair of 80 of them (seed 0):
# the highest honest share 0.155, the lowest disguised one 0.784; of the whole class, the pairs listed were exactly
# the 62,475 disguised ones, the lowest at 0.733 (with Python's salted hash(); with the text's own hash, --n 80
# --sample 80: 0.146 and 0.796, the 1,576 disguised pairs listed exactly). THRESHOLD lies between, with room on both
# sides.
THRESHOLD = 0.5
NOISE = 25  # copydetect's noise threshold: the k of its k-grams, in characters of the tokenized code
GUARANTEE = 30  # copydetect's guarantee threshold: a match this long is always seen (winnowing window 6)
PREFILTER = 0.5  # a pair whose shared fingerprints are under this part of THRESHOLD is not compared in full
MAX_BYTES = 4 * 1024 * 1024  # a bigger file is not read (the Gradescope staging's limit, grader.gradescope)
MAX_REGIONS = 8  # matching regions quoted per pair, the longest
MAX_LINES = 40  # lines quoted per region
MAX_PAIRS = 100  # pairs listed (the rest: counted)
MAX_QUOTED = 8  # of them, the first with their regions quoted side by side (a class of copies stays a page, not MBs)
INSTALL = 'python -m pip install -e ".[report]"'
UNAVAILABLE = (f"Сравнение кода не выполнено: нет библиотеки copydetect. Установите её ({INSTALL}) и постройте отчёт "
               "заново.")
NO_CODE = ("Код работ не сравнивался: отчёт построен из записей без кода. Укажите папку работ: python -m "
           "grader.reporting.class_report ЗАПИСИ ПАПКА --code ПАПКА_С_РАБОТАМИ (выгрузка Gradescope сравнивается "
           "сама).")


@dataclass
class Code:
    """A submission's code: pieces (``dp.py``, ``ячейка 5``) and their texts, joined into one document."""
    pieces: list[tuple[str, str]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(text + "\n" for _, text in self.pieces)

    def where(self, start: int, end: int) -> tuple[str, int, int]:
        """The piece and its lines (from 1) that characters ``start:end`` of the document fall in."""
        offset = 0
        for label, text in self.pieces:
            if start < offset + len(text) + 1:
                first = text.count("\n", 0, max(0, start - offset)) + 1
                last = text.count("\n", 0, max(0, min(end, offset + len(text)) - offset - 1)) + 1
                return label, first, max(first, last)
            offset += len(text) + 1
        return "", 0, 0


def read_text(path: Path) -> str | None:
    """A regular file's text, opened without following a link; None for anything else or a file over MAX_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        return f.read(MAX_BYTES + 1)[:MAX_BYTES].decode("utf-8", errors="replace")


def notebook_code(path: Path) -> list[tuple[str, str]]:
    """A notebook's code cells (grader.boundary.loading.code_cells: shell and magic lines left out) as pieces."""
    from grader.boundary.loading import code_cells

    if read_text(path) is None:
        return []
    try:
        return [(f"ячейка {number}", source) for number, source in code_cells(path)]
    except Exception:  # noqa: BLE001 - a notebook that cannot be read has no code to compare
        return []


def submission_code(path: Path, hw: Homework) -> Code:
    """The code grading graded in a submission (a student's folder, a notebook, a Gradescope submission folder)."""
    from grader.grading.submissions import locate

    if path.is_symlink():
        return Code()
    if path.is_file():
        return Code(notebook_code(path) if path.suffix == ".ipynb" else [])
    sub = locate(path, hw)
    if sub.error:
        return Code()
    if sub.kind == "notebook":
        return Code(notebook_code(sub.path))
    pieces = []
    for part in hw.parts:
        text = read_text(sub.path / f"{part.module}.py")
        if text is not None and (part.module + ".py") not in [label for label, _ in pieces]:
            pieces.append((f"{part.module}.py", text))
    return Code(pieces)


def class_code(folder: Path, hw: Homework) -> dict[str, Code]:
    """Each submission of a class folder (grader.grading.submissions.find_submissions: the records' names) -> its
    code."""
    from grader.grading.submissions import find_submissions

    return {sub.name: submission_code(sub.path, hw) for sub in find_submissions(folder, hw)}


def boilerplate(hw: Homework) -> Code:
    """What every submission starts from: the stub modules and the kit's notebook's code cells."""
    pieces = [(f"{part.module}.py", (hw.homework_dir / f"{part.module}.py").read_text(encoding="utf-8"))
              for part in hw.parts if (hw.homework_dir / f"{part.module}.py").is_file()]
    notebook = ROOT / "notebooks" / f"{hw.name}.ipynb"
    return Code(pieces + (notebook_code(notebook) if notebook.is_file() else []))


def _stable_hash(text: str) -> int:
    """A k-gram's hash that depends on its text only (copydetect's winnowing keeps the smallest in each window)."""
    return zlib.crc32(text.encode("utf-8"))


def available() -> bool:
    try:
        import copydetect  # noqa: F401 - optional: the extra .[report]
    except ImportError:
        return False
    return True


def compare(codes: dict[str, Code], common: Code, threshold: float = THRESHOLD, listed: int = MAX_PAIRS) -> dict:
    """The alike pairs of ``codes`` (a submission's name -> its code), ``common`` being the boilerplate: a dict
    ``{"available", "compared", "threshold", "pairs": [{"a", "b", "share", "shares", "regions"}], "more", "found"}``
    (``found``: every pair at or above the threshold as (a, b, share)),
    pairs by share, highest first, the first ``listed`` of them, the first :data:`MAX_QUOTED` with their regions
    (names as given: the report hashes and scrubs them)."""
    if not available():
        return {"available": False, "compared": 0, "threshold": threshold, "pairs": [], "more": 0,
                "message": UNAVAILABLE}
    from copydetect import CodeFingerprint, compare_files, utils

    # copydetect hashes its k-grams with Python's hash(), salted per process (PYTHONHASHSEED): the same class gave
    # shares of 0.65 and 0.89 in two runs. A hash of the text itself gives every run and machine the same report.
    utils.hash = _stable_hash
    window = GUARANTEE - NOISE + 1
    base = CodeFingerprint("boilerplate.py", NOISE, window, fp=io.StringIO(common.text), language="python")
    skip = sorted(base.hashes)
    prints = {name: CodeFingerprint(f"{name}.py", NOISE, window, boilerplate=skip, fp=io.StringIO(code.text),
                                    language="python")
              for name, code in codes.items() if code.pieces}
    names = sorted(prints, key=str.lower)
    found = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            fa, fb = prints[a], prints[b]
            smaller = min(len(fa.hashes), len(fb.hashes))
            if not smaller or len(fa.hashes & fb.hashes) < PREFILTER * threshold * smaller:
                continue
            shares = [float(s) for s in compare_files(fa, fb)[1]]
            if min(shares) >= threshold:
                found.append((min(shares), a, b, shares))
    found.sort(key=lambda f: (-f[0], f[1].lower(), f[2].lower()))
    pairs = [{"a": a, "b": b, "share": round(share, 4), "shares": [round(s, 4) for s in shares],
              "regions": regions(codes[a], codes[b], prints[a], prints[b], compare_files(prints[a], prints[b])[2])
              if i < MAX_QUOTED else []}  # the slices again for the few quoted: memory stays small
             for i, (share, a, b, shares) in enumerate(found[:listed])]
    return {"available": True, "compared": len(prints), "threshold": threshold, "pairs": pairs,
            "more": len(found) - len(pairs), "message": "", "found": [(a, b, share) for share, a, b, _ in found]}


def _raw(fp, idx):
    """Positions in a fingerprint's tokenized code -> positions in its code as written (copydetect's offsets)."""
    import numpy as np

    idx = np.asarray(idx, dtype=np.int64)
    if len(fp.offsets) == 0 or len(idx) == 0:
        return idx
    return idx + fp.offsets[:, 1][np.clip(np.searchsorted(fp.offsets[:, 0], idx), 0, fp.offsets.shape[0] - 1)]


def regions(code_a: Code, code_b: Code, fa, fb, slices) -> list[dict]:
    """The matching regions of a pair, the longest first: each region of ``a`` (copydetect's slices, in the code as
    written) beside the region of ``b`` that holds most of the same fingerprints (each fingerprint at its first
    place in either)."""
    import numpy as np

    sa, sb = (np.asarray(s, dtype=np.int64).reshape(2, -1) for s in slices)
    shared = sorted(fa.hashes & fb.hashes)
    ia = np.searchsorted(sa[0], _raw(fa, [fa.hash_idx[h][0] for h in shared]), side="right") - 1
    ib = np.searchsorted(sb[0], _raw(fb, [fb.hash_idx[h][0] for h in shared]), side="right") - 1
    votes = Counter((int(x), int(y)) for x, y in zip(ia, ib) if x >= 0 and y >= 0)
    best: dict[int, tuple[int, int]] = {}
    for (x, y), n in votes.items():
        if n > best.get(x, (0, -1))[0]:
            best[x] = (n, y)
    text_a, text_b = code_a.text, code_b.text
    longest = sorted(best, key=lambda x: -(sa[1][x] - sa[0][x]))[:MAX_REGIONS]
    out = []
    for x in sorted(longest, key=lambda x: sa[0][x]):
        y = best[x][1]
        out.append({"a": _quote(code_a, text_a, int(sa[0][x]), int(sa[1][x])),
                    "b": _quote(code_b, text_b, int(sb[0][y]), int(sb[1][y]))})
    return out


def _quote(code: Code, text: str, start: int, end: int) -> dict:
    """Whole lines around characters ``start:end``: where they are and their text (controls escaped)."""
    piece, first, last = code.where(start, end)
    begin = text.rfind("\n", 0, start) + 1
    stop = text.find("\n", max(start, end - 1))
    lines = text[begin:stop if stop >= 0 else len(text)].splitlines()
    cut = len(lines) > MAX_LINES
    quoted = "\n".join(escape.printable(line, "\t") for line in lines[:MAX_LINES]) + ("\n…" if cut else "")
    return {"where": escape.name(piece), "from": first, "to": last, "text": quoted}


def for_class(records: list[dict], hw: Homework | None, folder: Path | None = None) -> dict:
    """The alike pairs of a class's records: the code of each comes from ``folder`` (the class folder a batch
    graded: grader.grading.submissions.find_submissions names the submissions as the records do), else from the
    submission's own folder of a Gradescope export (the record's ``folder``); without either, the section says how to
    give it."""
    names = {r["name"] for r in records}
    if hw is None or (folder is None and not any(r.get("folder") for r in records)):
        return {"available": available(), "compared": 0, "threshold": THRESHOLD, "pairs": [], "more": 0,
                "message": NO_CODE}
    if not available():
        return compare({}, Code())
    if folder is not None:
        codes = {name: code for name, code in class_code(folder, hw).items() if name in names}
    else:
        codes = {r["name"]: submission_code(Path(r["folder"]), hw) for r in records if r.get("folder")}
    return compare(codes, boilerplate(hw))
