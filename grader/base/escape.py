"""Student text as data, escaped for where it lands (the terminal, a feedback file, JSON, Markdown, CSV).

Text a submission can influence (an exception's message, a repr of its answer, a notebook cell's source, the
name of a student's folder) never reaches an output raw: a control character (an ESC sequence that clears the
screen and draws a fake scoreboard) is written as a visible escape, ``\\x1b``, and so is a lone surrogate, which no
UTF-8 output could encode (``\\udcff``).
"""
from __future__ import annotations

import hashlib
import re

# C0 and C1 control characters, DEL, the Unicode line and paragraph separators and bidirectional overrides, and
# surrogates (a lone one is no character: a file name's byte that is not UTF-8, or a ``\udcff`` in a JSON text)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _visible(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, keep: str = "") -> str:
    """``text`` with every control character but those in ``keep`` (e.g. ``"\\n"``) written as an escape."""
    return _CONTROL.sub(lambda m: m.group(0) if m.group(0) in keep else _visible(m), str(text))


def one_line(text, limit: int | None = None) -> str:
    """Text the worker can influence (an answer's repr, an exception's message, a load error, a file or parameter
    name), as it lands in a message: ``str(text)`` as one line, every control character (a newline too) and lone
    surrogate written as its escape (:func:`printable`), at most ``limit`` characters (then «…»). The one helper for
    such text: a student's newline never starts a line of the report's own (a forged «Похоже на типичную ошибку»)."""
    line = printable(str(text))
    return line if limit is None or len(line) <= limit else line[:limit] + "…"


def first_line(text: str, limit: int = 400) -> str:
    """A reason's first line as a report quotes it: whole up to ``limit`` characters, else cut after the last whole
    word that fits, with «…» (never mid-word: «ни в no»)."""
    line = (str(text).splitlines() or [""])[0]
    if len(line) <= limit:
        return line
    head = line[:limit]
    if not line[limit].isspace() and len(head.split()) > 1:  # the cut falls inside a word: leave that word out
        head = head.rsplit(None, 1)[0]
    return head.rstrip(" ,;:—-") + " …"


def valid(text: str) -> str:
    """``text`` as valid Unicode, which encodes to UTF-8 whatever it came from: each surrogate written as its escape
    (``\\udcff``); everything else kept (newlines too: :func:`printable` escapes for where the text lands)."""
    return _SURROGATE.sub(_visible, text)


def valid_data(value):
    """``value`` (plain data: dicts, lists, tuples, texts, numbers) with every text in it, keys too, :func:`valid`."""
    if isinstance(value, str):
        return valid(value)
    if isinstance(value, dict):
        return {valid_data(k): valid_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [valid_data(v) for v in value]
    return value


def identifiers(values, limit: int = 100) -> list[str]:
    """Of ``values`` (names the worker gave: the functions a call went through), the first ``limit`` that are
    Python identifiers of at most 100 characters; anything else is dropped."""
    return [v for v in list(values)[:limit] if type(v) is str and len(v) <= 100 and v.isidentifier()]


def name(raw: str) -> str:
    """A file or folder name as text: bytes that are not UTF-8 (``surrogateescape``) replaced, controls escaped."""
    return printable(str(raw).encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


def csv_cell(value):
    """A CSV cell: text printable, and a text a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, a
    tab or a carriage return first) kept as text by a leading apostrophe."""
    if not isinstance(value, str):
        return value
    text = printable(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


_UNSAFE = re.compile(r"[^\w.+-]", re.UNICODE)


def file_stem(raw: str, taken: set[str]) -> str:
    """A file name stem made from a submission's name: letters, digits and ``_.+-`` only, no leading dot or dash,
    at most 80 characters (with a digest of the name when it had to change), unique among ``taken`` whatever the
    case, which it joins. A name that is taken already (``Victim`` after ``victim``) gets a digest of itself, never a
    counter: ``victim-2`` could be another student's name, whose feedback the file would seem to be."""
    digest = "-" + hashlib.sha256(str(raw).encode("utf-8", "surrogateescape")).hexdigest()[:6]
    stem = _UNSAFE.sub("_", name(raw)).lstrip(".-")[:80] or "работа"
    if stem != raw:  # a name changed here never takes the file of a student whose name it now reads as
        stem += digest
    unique, n = stem, 1
    while unique.lower() in taken:
        n += 1
        unique = f"{stem}{digest}" + (f"-{n}" if n > 2 else "")
    taken.add(unique.lower())
    return unique


def code_block(text: str) -> str:
    """``text`` as a Markdown code block that nothing in it can close: the fence is longer than any run of
    backticks in the text (CommonMark)."""
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}\n{text}\n{fence}"
