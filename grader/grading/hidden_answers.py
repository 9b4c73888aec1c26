"""The answer key's answers on hidden inputs, recorded once per secret, beside it: ``<secret>.answers/<part>.json``.

A check on hidden inputs asks the answer key (grader.grading.key) as a check on public inputs does. What it asks on
inputs made from the secret alone (a hidden seed's MDP, trajectory or batch) is the same in every grade of that secret,
so it is computed once: ``python -m grader.grading.secret HW --new`` records it for each candidate secret while the
reference is graded on that secret's hidden inputs, and keeps it with the accepted secret; ``--record`` records it for
the secret in force. A grade, a batch and a Gradescope container then read it; the key computes only what no grade of
the reference asked: a call on inputs the student's own run made (the replay of a journal the reference would not have
written), or a typical mistake's answer wanted by a failed check.

The records sit beside the secret (``tests/<hw>/key/secret.answers/`` for ``tests/<hw>/key/secret``, whether the
file exists or the kit's default secret is in force; beside the file HWKIT_SECRET_FILE names otherwise), in the
instructor's key folder, which the student's copy never holds (grader.authoring.release) and a worker never sees.

A record says what it is valid for: the secret's fingerprint, a digest of the answer key's modules (``key/*.py``)
and the checks' version, a digest of the homework's test modules and the modules they share with the worker (what
makes the hidden inputs and the key calls). A digest, not a declared version: no one has to remember to raise it,
and a record made for a check's old inputs is never read for its new ones. One differing makes the record stale;
a stale or missing record is the kit's error, never a pass and never a silent recomputation: the grade for the
record refuses to start (grader.cli, grader.batch), ``grader.gradescope`` and ``grader.grading.public_answers --check``
refuse with exit 2, and a check that asks it anyway fails with the kit's error (grader.grading.key.MissingAnswer).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from grader.grading.hidden import fingerprint, secret, secret_file
from grader.grading.key import keyed_parts

FORMAT = 1  # the records' own format
RECORD_COMMAND = "python -m grader.grading.secret {hw} --record"
MISSING = "не записаны"
STALE = ("ошибка набора проверок: ответы ключа на скрытых входах для секрета {secret} {what} ({parts}): "
         "запишите их командой " + RECORD_COMMAND)


def record_dir(tests_dir: Path) -> Path:
    """Where the records of the secret in force sit: beside its file, named after it."""
    path = secret_file(tests_dir)
    return path.with_name(path.name + ".answers")


def record_path(tests_dir: Path, part: str) -> Path:
    return record_dir(tests_dir) / f"{part}.json"


def _digest(paths: list[Path], root: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0"
                      + path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()[:16]


def key_digest(tests_dir: Path) -> str:
    """A digest of the answer key's modules, ``tests/<hw>/key/*.py``."""
    tests_dir = Path(tests_dir)
    return _digest(sorted((tests_dir / "key").glob("*.py")), tests_dir)


def checks_digest(tests_dir: Path) -> str:
    """The checks' version: a digest of the test modules ``tests/<hw>/*.py`` and ``shared/*.py``."""
    tests_dir = Path(tests_dir)
    return _digest(sorted([*tests_dir.glob("*.py"), *(tests_dir / "shared").glob("*.py")]), tests_dir)


def valid_for(tests_dir: Path) -> dict:
    """What a record made now would say it is valid for."""
    return {"format": FORMAT, "secret": fingerprint(secret(tests_dir)), "key": key_digest(tests_dir),
            "checks": checks_digest(tests_dir)}


WHAT = {"format": "записаны в другом формате", "secret": "записаны для другого секрета",
        "key": "записаны другим ключом (key/*.py)", "checks": "записаны для другой версии проверок (tests/<hw>/*.py)"}


ENTRIES = ', "entries": ['  # ends a record's first line, its head (:func:`text`)


def _head(path: Path) -> dict:
    """A record's head, from its first line alone (the entries may be megabytes)."""
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    return json.loads(first[:first.index(ENTRIES)] + "}")


def problem(tests_dir: Path, part: str, now: dict | None = None, head: dict | None = None) -> str | None:
    """Why the record of ``part`` cannot be read for the secret in force (missing, unreadable, or made for another
    secret, key or checks: the first field that differs), or None."""
    if head is None:
        try:
            head = _head(record_path(tests_dir, part))
        except FileNotFoundError:
            return MISSING
        except (OSError, ValueError) as exc:
            return f"не читаются ({type(exc).__name__})"
    now = now or valid_for(tests_dir)
    if type(head) is not dict:
        return "не запись ответов"
    for field, value in now.items():
        if head.get(field) != value:
            return WHAT[field]
    return None


def problems(tests_dir: Path, parts: list[str]) -> dict[str, str]:
    """part -> :func:`problem`, for the parts whose record cannot be read."""
    now = valid_for(tests_dir)
    found = {part: problem(tests_dir, part, now) for part in parts}
    return {part: why for part, why in found.items() if why}


def refusal(hw, parts: list[str] | None = None) -> str | None:
    """One line saying why the grade for the record of ``parts`` (module names; default: every part with an answer
    key) cannot read the key's hidden answers, and the command that records them; None when it can."""
    keyed = [p.module for p in keyed_parts(hw)]
    found = problems(hw.tests_dir, [p for p in (parts if parts is not None else keyed) if p in keyed])
    if not found:
        return None
    what = "; ".join(sorted(set(found.values())))
    return STALE.format(secret=fingerprint(secret(hw.tests_dir)), what=what, parts=", ".join(found), hw=hw.name)


_LOADED: dict[tuple[str, str, str], dict[str, list[dict]]] = {}


def entries(tests_dir: Path, part: str) -> dict[str, list[dict]]:
    """The record of ``part`` for the secret in force, as function name -> its entries; raises LookupError (one
    line) when it is missing or stale."""
    cache = (str(tests_dir), str(record_dir(tests_dir)), part)
    if cache not in _LOADED:
        path = record_path(tests_dir, part)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise LookupError(f"{path.name}: {MISSING}") from None
        except (OSError, ValueError) as exc:
            raise LookupError(f"{path.name}: не читаются ({type(exc).__name__})") from None
        why = problem(tests_dir, part, head=data)
        if not why and type(data.get("entries")) is not list:
            why = "не запись ответов"
        if why:
            raise LookupError(f"{path.name}: {why}")
        by_name: dict[str, list[dict]] = {}
        for e in data["entries"]:
            by_name.setdefault(e["function"], []).append(e)
        _LOADED[cache] = by_name
    return _LOADED[cache]


def text(hw, part: str, made: list[dict], cpu: float) -> str:
    """A part's record: what it is valid for, the key's CPU seconds it saves a grade of the reference, one entry
    a line."""
    head = {"homework": hw.name, "part": part, "made_by": RECORD_COMMAND.format(hw=hw.name),
            **valid_for(hw.tests_dir), "numpy": np.__version__, "key_cpu_s": round(cpu, 3)}
    lines = [json.dumps({k: e[k] for k in ("function", "test", "inputs", "answer")}, ensure_ascii=False,
                        separators=(",", ":")) for e in made]
    return json.dumps(head, ensure_ascii=False)[:-1] + ENTRIES + "\n" + ",\n".join(lines) + "\n]}\n"


def write(hw, recorded: dict[str, list[dict]], parts: list[str]) -> list[Path]:
    """Write each part's record from the key calls a recording grade made (grader.grading.key.RECORDING: part ->
    entries, those on hidden inputs flagged), one entry per distinct function and inputs; return the files."""
    from grader.grading.public_answers import distinct

    out = []
    for part in parts:
        made = [e for e in recorded.get(part, []) if e.get("hidden")]
        path = record_path(hw.tests_dir, part)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the instructor's, as the key folder is
        path.write_bytes(text(hw, part, distinct(part, made), sum(e.get("cpu", 0.0) for e in made)).encode("utf-8"))
        out.append(path)
    _LOADED.clear()
    return out
