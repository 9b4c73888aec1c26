"""Student text as data, escaped for where it lands (the terminal, a feedback file, JSON, Markdown, CSV).

Text a submission can influence (an exception's message, a repr of its answer, a notebook cell's source, the
name of a student's folder) never reaches an output raw: a control character (an ESC sequence that clears the
screen and draws a fake scoreboard) is written as a visible escape, ``\\x1b``.
"""
from __future__ import annotations

import re

# C0 and C1 control characters, DEL, and the Unicode line and paragraph separators and bidirectional overrides
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, keep: str = "") -> str:
    """``text`` with every control character but those in ``keep`` (e.g. ``"\\n"``) written as an escape."""
    return _CONTROL.sub(lambda m: m.group(0) if m.group(0) in keep else _visible(m), str(text))
