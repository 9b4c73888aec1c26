"""Record the answer key on the public inputs: ``python -m grader.grading.public_answers [HW] [PART ...] [--check]``.

Runs each part's checks on the reference (``solutions/``) with the instructor's modules of the answer key
(``tests/<hw>/key/``) and writes every key call it made, inputs and answer, to ``tests/<hw>/answers/<part>.json``:
what the student's copy, which holds no key, compares with (grader.grading.key). ``--check`` writes nothing and exits 1
when a record is missing, extra, or its answer moved beyond floating-point noise, and exits 2 when the key's
answers on hidden inputs (grader.grading.hidden_answers) are missing or stale for the secret in force.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import numpy as np

from grader.base import homeworks
from grader.base.homeworks import ROOT, Homework, Part
from grader.grading import hidden_answers, key
from grader.grading.hidden import INPUTS_ENV
from grader.grading.key import keyed_parts

ANSWER_RTOL = 1e-7  # a recorded answer is stale when it moved more than this (another machine's rounding moves less)


class AnswersError(Exception):
    pass


def record(hw: Homework, part: Part) -> list[dict]:
    """The key calls the reference's run of ``part``'s checks makes on public inputs, one entry per distinct
    function and inputs, in the order first made."""
    from grader.grading.runner import PYTEST_FLAGS, checking_environment

    with tempfile.TemporaryDirectory(prefix="hwanswers-") as tmp:
        out = Path(tmp) / "recorded.json"
        env = {**checking_environment(uuid.uuid4().hex, "public"), key.RECORD_ENV: str(out), INPUTS_ENV: "public"}
        proc = subprocess.run([sys.executable, "-m", "pytest", str(hw.tests_dir / part.tests), "--impl=solutions",
                               *PYTEST_FLAGS, "-W", "ignore", "-p", "no:faulthandler"],
                              cwd=tmp, env=env, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0 or not out.is_file():
            raise AnswersError(f"the reference does not pass {part.tests} (exit {proc.returncode}); nothing recorded:\n"
                               + proc.stdout[-3000:] + proc.stderr[-2000:])
        made = json.loads(out.read_text(encoding="utf-8")).get(part.module, [])
    return distinct(part.module, [e for e in made if not e.get("hidden")])


def distinct(part: str, made: list[dict]) -> list[dict]:
    """One entry per distinct function and inputs of the key calls ``made``, in the order first made; the same
    inputs answered twice differently is the kit's error (an answer key is a function of its inputs)."""
    entries: list[dict] = []
    by_name: dict[str, list[dict]] = {}
    for entry in made:
        same_name = by_name.setdefault(entry["function"], [])
        twin = next((e for e in same_name if key.same(e["inputs"], entry["inputs"])), None)
        if twin is None:
            entries.append(entry)
            same_name.append(entry)
        elif not _close(twin["answer"], entry["answer"]):
            raise AnswersError(f"{part}.{entry['function']} answered the same inputs twice differently "
                               f"(in {twin['test']} and {entry['test']}): an answer key is a function of its inputs")
    return entries


def _close(a, b) -> bool:
    return _close_decoded(key.decode(a), key.decode(b))


def _close_decoded(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close_decoded(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and type(a) is type(b):
        return len(a) == len(b) and all(_close_decoded(x, y) for x, y in zip(a, b))
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        return a == b
    try:
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape or x.dtype.kind != y.dtype.kind and {x.dtype.kind, y.dtype.kind} - set("iuf"):
            return False
        if x.dtype.kind in "biu" and y.dtype.kind in "biu":
            return bool(np.array_equal(x, y))
        return bool(np.allclose(x, y, rtol=ANSWER_RTOL, atol=ANSWER_RTOL, equal_nan=True))
    except (TypeError, ValueError):
        return False


def sources(hw: Homework, part: Part) -> str:
    """A digest of what a part's records are made from: its checks, its answer key, the reference module and the
    test environments (line ends normalized: the same on every checkout)."""
    import hashlib

    paths = [hw.tests_dir / part.tests, key.key_dir(hw.tests_dir) / f"{part.module}.py",
             hw.solutions_dir / f"{part.module}.py", *sorted(hw.shared_dir.glob("*.py"))]
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        if path.is_file():
            digest.update(path.read_bytes().replace(b"\r\n", b"\n"))
    return digest.hexdigest()[:16]


def stale_sources(hw: Homework) -> list[Path]:
    """The records files whose part changed since they were made (or that are missing): cheap, no grading."""
    out = []
    for part in keyed_parts(hw):
        path = key.answers_path(hw.tests_dir, part.module)
        try:
            made_from = json.loads(path.read_text(encoding="utf-8")).get("sources")
        except (OSError, ValueError):
            made_from = None
        if made_from != sources(hw, part):
            out.append(path)
    return out


def text(hw: Homework, part: Part, entries: list[dict]) -> str:
    """The records file: one entry a line (a change reads as a diff of the calls it changed)."""
    head = {"homework": hw.name, "part": part.module, "made_by": "python -m grader.grading.public_answers",
            "sources": sources(hw, part), "numpy": np.__version__}
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entries]
    return (json.dumps(head, ensure_ascii=False)[:-1] + ', "entries": [\n' + ",\n".join(lines) + "\n]}\n")


def stale(hw: Homework, part: Part, entries: list[dict]) -> list[str]:
    """What differs between the recorded file and ``entries`` made now (empty: up to date)."""
    old = key.load(key.answers_path(hw.tests_dir, part.module))
    problems = []
    for entry in entries:
        match = next((e for e in old if e["function"] == entry["function"] and key.same(e["inputs"], entry["inputs"])),
                     None)
        if match is None:
            problems.append(f"no record of {entry['function']} called in {entry['test']}")
        elif not _close(match["answer"], entry["answer"]):
            problems.append(f"the answer of {entry['function']} called in {entry['test']} moved")
    for e in old:
        if not any(n["function"] == e["function"] and key.same(e["inputs"], n["inputs"]) for n in entries):
            problems.append(f"{e['function']} (recorded in {e['test']}) is no longer called")
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.grading.public_answers", description=__doc__.splitlines()[0])
    p.add_argument("homework", nargs="?", help="default: every homework")
    p.add_argument("parts", nargs="*", help="default: every part with an answer key")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a record is out of date")
    args = p.parse_args(argv)
    failed = False
    try:
        for name in [args.homework] if args.homework else homeworks.available():
            hw = homeworks.load(name)
            if args.check and hidden_answers.refusal(hw):  # cheap, before the reference is run
                print(f"answers: {hidden_answers.refusal(hw)}", file=sys.stderr)
                return 2
            for part in keyed_parts(hw):
                if args.parts and part.id not in args.parts and part.module not in args.parts:
                    continue
                entries = record(hw, part)
                path = key.answers_path(hw.tests_dir, part.module)
                if args.check:
                    problems = stale(hw, part, entries)
                    failed |= bool(problems)
                    print(f"{path.relative_to(ROOT)}: " + ("; ".join(problems[:5]) if problems else
                                                           f"up to date ({len(entries)} answers)"))
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(text(hw, part, entries).encode("utf-8"))
                    print(f"wrote {path.relative_to(ROOT)} ({len(entries)} answers)")
    except (AnswersError, homeworks.UsageError, subprocess.TimeoutExpired) as exc:
        print(f"answers: {exc}", file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
