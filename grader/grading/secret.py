"""The instructor's secret, from which the hidden inputs of the grade derive: ``python -m grader.grading.secret HW
[--new]``.

Without an option: which secret grades the homework (its fingerprint, or that it is the kit's default). With
``--new``: draw a secret (say, for each term), and keep it only when the reference and the kit's correct variants
(each folder of ``tests/kit/variants/<hw>/``) pass every check on its hidden inputs, the bonus included; a secret
whose inputs fail one is drawn again (up to ``--tries``). The reference's grade of each candidate records the answer
key's answers on its hidden inputs (grader.grading.hidden_answers), which the variants' grades then read, and which are
kept with the accepted secret. It is written to ``tests/<hw>/key/secret`` (readable by its owner only), which the
student's copy never holds, or to the file ``HWKIT_SECRET_FILE`` names; its records beside it. Every grade's CSV row and
JSON carries the secret's fingerprint. ``--record``: record the key's answers on the hidden inputs of the secret in
force again (after a change to the checks or the key), from the reference's grade.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sys
import tempfile
from pathlib import Path

from grader.base import homeworks
from grader.base.homeworks import ROOT, Homework
from grader.grading import hidden_answers, key
from grader.grading.hidden import DEFAULT_SECRET, SECRET_ENV, fingerprint, hidden_available, secret, secret_path

DEFAULT_REFUSED = ("для выставления оценки нужен свой секрет скрытых входов (сейчас — секрет набора по умолчанию, "
                   "известный всем, у кого есть набор): python -m grader.grading.secret {hw} --new; или, осознанно, "
                   "--allow-default-secret")


def described(hw: Homework) -> str:
    """The secret grading ``hw``, in words: its fingerprint, or that it is the default."""
    if not hidden_available(hw.tests_dir):
        return "no answer key here (a student's copy): public inputs only"
    text = secret(hw.tests_dir)
    return f"{'the default secret' if text == DEFAULT_SECRET else 'secret'} {fingerprint(text)}"


ALLOW_ENV = "HWKIT_ALLOW_DEFAULT_SECRET"  # "1": as --allow-default-secret (the kit's own tests set it)


def is_default(hw: Homework) -> bool:
    return hidden_available(hw.tests_dir) and secret(hw.tests_dir) == DEFAULT_SECRET


def refused(hw: Homework, allow: bool = False) -> str | None:
    """Why a grade for the record is refused here (the kit's default secret, not allowed), or None."""
    if is_default(hw) and not (allow or os.environ.get(ALLOW_ENV) == "1"):
        return DEFAULT_REFUSED.format(hw=hw.name)
    return None


def variants(hw: Homework, root: Path = ROOT) -> list[Path]:
    """The kit's correct variants of ``hw``: each folder of ``tests/kit/variants/<hw>/`` (``<hw>/<variant>/``),
    folders only (not the README beside them, not another homework's)."""
    folder = root / "tests" / "kit" / "variants" / hw.name
    found = folder.iterdir() if folder.is_dir() else []
    return sorted(p for p in found if p.is_dir() and not p.name.startswith((".", "__")))


def target(hw: Homework) -> Path:
    """Where ``--new`` writes the secret: the file ``HWKIT_SECRET_FILE`` names (where the grader then reads it,
    grader.grading.hidden.secret), else ``tests/<hw>/key/secret``."""
    return Path(os.environ[SECRET_ENV]) if os.environ.get(SECRET_ENV) else secret_path(hw.tests_dir)


@contextlib.contextmanager
def _env(name: str, value: str):
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def _failed(hw: Homework, label: str, impl: str) -> list[str]:
    """``impl``'s failed checks (and errors) in the grade of every part on the hidden inputs of the secret in force."""
    from grader.grading.runner import run_parts

    failed = []
    for r in run_parts(hw, [(p, None) for p in hw.parts], impl):
        failed += [f"{label}: {r.error}"] if r.error else []
        failed += [f"{label}: {c.name}" for c in r.checks if not c.passed]
    return failed


def record(hw: Homework) -> tuple[list[str], list[Path]]:
    """Grade the reference on the hidden inputs of the secret in force, recording every key call it makes; when it
    passes every check, write the key's answers on hidden inputs beside the secret (grader.grading.hidden_answers).
    Returns what failed and the files written (none when something failed)."""
    from grader.grading.runner import kit_rewritten

    with tempfile.TemporaryDirectory(prefix="hwrecord-") as tmp:
        out = Path(tmp) / "recorded.json"
        with _env(key.RECORD_ENV, str(out)):
            failed = _failed(hw, "solutions", "solutions")
        if not out.is_file():
            failed.append("solutions: the checking process recorded nothing")
        if failed:
            return failed, []
        written = hidden_answers.write(hw, json.loads(out.read_text(encoding="utf-8")),
                                       [p.module for p in key.keyed_parts(hw)])
    kit_rewritten(hw)
    return [], written


def passes(hw: Homework, text: str) -> tuple[list[str], dict[str, bytes]]:
    """What fails on the hidden inputs of the secret ``text`` (the reference's and each variant's failed checks), and
    the key's answers on them (file name: content) that the reference's grade recorded and the variants' read."""
    with tempfile.TemporaryDirectory(prefix="hwsecret-") as tmp:
        path = Path(tmp) / "secret"
        path.write_text(text + "\n", encoding="utf-8")
        with _env(SECRET_ENV, str(path)):
            failed, written = record(hw)
            for variant in variants(hw) if not failed else []:
                failed += _failed(hw, variant.name, str(variant))
        return failed, {p.name: p.read_bytes() for p in written}


def _keep(hw: Homework, text: str, recorded: dict[str, bytes]) -> None:
    """Write the accepted secret where it goes (its owner's only), and its records beside it, in place of any."""
    path = target(hw)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    if hasattr(os, "fchmod"):  # a file that was there keeps its mode through O_CREAT: its owner's only now
        os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    folder = hidden_answers.record_dir(hw.tests_dir)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for old in folder.glob("*.json"):
        old.unlink()
    for name, data in recorded.items():
        (folder / name).write_bytes(data)


def new(hw: Homework, tries: int = 5) -> str:
    """Draw, try and write a new secret with its records; return its fingerprint."""
    for attempt in range(1, tries + 1):
        text = secrets.token_urlsafe(24)
        failed, recorded = passes(hw, text)
        if not failed:
            _keep(hw, text, recorded)
            return fingerprint(text)
        print(f"secret {attempt}: rejected, its hidden inputs fail {len(failed)} check(s), e.g. {failed[0]}",
              file=sys.stderr)
    raise SystemExit(f"no secret accepted in {tries} tries: a check's hidden inputs fail the reference; see above")


def _shown(path: Path) -> Path:
    return path.resolve().relative_to(ROOT) if path.resolve().is_relative_to(ROOT) else path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.grading.secret", description=__doc__.splitlines()[0])
    p.add_argument("homework")
    p.add_argument("--new", action="store_true", help="draw, try and keep a new secret")
    p.add_argument("--record", action="store_true",
                   help="record the answer key's answers on the hidden inputs of the secret in force again")
    p.add_argument("--tries", type=int, default=5)
    args = p.parse_args(argv)
    try:
        hw = homeworks.load(args.homework)
    except homeworks.UsageError as exc:
        print(f"secret: {exc}", file=sys.stderr)
        return 2
    if (args.new or args.record) and not hidden_available(hw.tests_dir):
        print("secret: no answer key (tests/<hw>/key/) here: hidden inputs are the instructor's", file=sys.stderr)
        return 2
    if args.record:
        failed, written = record(hw)
        if failed:
            print(f"secret: nothing recorded: the reference fails {len(failed)} check(s) on the hidden inputs of "
                  f"{described(hw)}, e.g. {failed[0]}", file=sys.stderr)
            return 1
        for path in written:
            print(f"wrote {_shown(path)}")
    elif args.new:
        print(f"wrote {_shown(target(hw))}: secret {new(hw, args.tries)}")
    else:
        print(described(hw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
