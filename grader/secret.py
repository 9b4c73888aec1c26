"""The instructor's secret, from which the hidden inputs of the grade derive: ``python -m grader.secret HW [--new]``.

Without ``--new``: which secret grades the homework (its fingerprint, or that it is the kit's default). With
``--new``: draw a secret (say, for each term), and keep it only when the reference and the kit's correct variants
(``tests/kit/variants/``) pass every check on its hidden inputs, the bonus included; a secret whose inputs fail
one is drawn again (up to ``--tries``). It is written to ``tests/<hw>/key/secret`` (readable by its owner only),
which the student's copy never holds. Every grade's CSV row and JSON carries the secret's fingerprint.
"""
from __future__ import annotations

import argparse
import os
import secrets
import sys
import tempfile
from pathlib import Path

from grader import homeworks
from grader.hidden import DEFAULT_SECRET, SECRET_ENV, fingerprint, hidden_available, secret, secret_path
from grader.homeworks import ROOT, Homework

DEFAULT_REFUSED = ("для выставления оценки нужен свой секрет скрытых входов (сейчас — секрет набора по умолчанию, "
                   "известный всем, у кого есть набор): python -m grader.secret {hw} --new; или, осознанно, "
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


def passes(hw: Homework, text: str) -> list[str]:
    """What fails on the hidden inputs of the secret ``text``: the reference's and each variant's failed checks."""
    from grader.runner import run_parts

    variants = sorted((ROOT / "tests" / "kit" / "variants").glob("*/"))
    failed = []
    with tempfile.TemporaryDirectory(prefix="hwsecret-") as tmp:
        path = Path(tmp) / "secret"
        path.write_text(text + "\n", encoding="utf-8")
        before = os.environ.get(SECRET_ENV)
        os.environ[SECRET_ENV] = str(path)
        try:
            for label, impl in [("solutions", "solutions"), *((v.name, str(v)) for v in variants)]:
                for r in run_parts(hw, [(p, None) for p in hw.parts], impl):
                    failed += [f"{label}: {r.error}"] if r.error else []
                    failed += [f"{label}: {c.name}" for c in r.checks if not c.passed]
        finally:
            if before is None:
                os.environ.pop(SECRET_ENV, None)
            else:
                os.environ[SECRET_ENV] = before
    return failed


def new(hw: Homework, tries: int = 5) -> str:
    """Draw, try and write a new secret; return its fingerprint."""
    for attempt in range(1, tries + 1):
        text = secrets.token_urlsafe(24)
        failed = passes(hw, text)
        if not failed:
            path = secret_path(hw.tests_dir)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text + "\n")
            return fingerprint(text)
        print(f"secret {attempt}: rejected, its hidden inputs fail {len(failed)} check(s), e.g. {failed[0]}",
              file=sys.stderr)
    raise SystemExit(f"no secret accepted in {tries} tries: a check's hidden inputs fail the reference; see above")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.secret", description=__doc__.splitlines()[0])
    p.add_argument("homework")
    p.add_argument("--new", action="store_true", help="draw, try and keep a new secret")
    p.add_argument("--tries", type=int, default=5)
    args = p.parse_args(argv)
    try:
        hw = homeworks.load(args.homework)
    except homeworks.UsageError as exc:
        print(f"secret: {exc}", file=sys.stderr)
        return 2
    if args.new:
        if not hidden_available(hw.tests_dir):
            print("secret: no answer key (tests/<hw>/key/) here: hidden inputs are the instructor's", file=sys.stderr)
            return 2
        print(f"wrote {secret_path(hw.tests_dir).relative_to(ROOT)}: secret {new(hw, args.tries)}")
    else:
        print(described(hw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
