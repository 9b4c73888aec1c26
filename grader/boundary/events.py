"""The events the checking process sends the grader's command line: one JSON object a line, each signed.

The command line (grader/grading/runner.py) gives the pytest process a fresh key on its standard input; the plugin
(grader/grading/plugin.py) signs every line with it. A line without a valid signature — written into the channel by
anything else — is not an event.
"""
from __future__ import annotations

import hashlib
import hmac
import json

from grader.base.escape import valid_data


def sign(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def line(key: bytes | None, record: dict) -> str:
    """One event as the line the plugin writes: its texts made valid (a lone surrogate a worker's text brought, in a
    file name or a forged ``\\udcff``, is written as that escape, here, before anything encodes or signs it), and in
    ASCII, so that nothing of it can fail to encode."""
    text = json.dumps(valid_data(record), ensure_ascii=True)
    return f"{sign(key, text)}\t{text}\n" if key else text + "\n"


def read(key: bytes, raw: bytes) -> dict | None:
    """The event on a line the runner read, or None when the line is not signed with ``key``."""
    signature, _, text = raw.decode("utf-8", errors="replace").rstrip("\n").partition("\t")
    if not hmac.compare_digest(signature, sign(key, text)):
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None
