"""The instructor's secret, from which the hidden inputs of the grade derive: ``python -m grader.secret HW [--new]``.

Without ``--new``: which secret grades the homework (its fingerprint, or that it is the kit's default). With
``--new``: draw a secret (say, for each term), and keep it only when the reference and the kit's correct variants
(each folder of ``tests/kit/variants/<hw>/``) pass every check on its hidden inputs, the bonus included; a secret
whose inputs fail one is drawn again (up to ``--tries``). It is written to ``tests/<hw>/key/secret`` (readable by its
owner only), which the student's copy never holds, or to the file ``HWKIT_SECRET_FILE`` names. Every grade's CSV
row and JSON carries the secret's fingerprint.
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


def variants(hw: Homework, root: Path = ROOT) -> list[Path]:
    """The kit's correct variants of ``hw``: each folder of ``tests/kit/variants/<hw>/`` (``<hw>/<variant>/``),
    folders only (not the README beside them, not another homework's)."""
    folder = root / "tests" / "kit" / "variants" / hw.name
    found = folder.iterdir() if folder.is_dir() else []
    return sorted(p for p in found if p.is_dir() and not p.name.startswith((".", "__")))


def target(hw: Homework) -> Path:
    """Where ``--new`` writes the secret: the file ``HWKIT_SECRET_FILE`` names (where the grader then reads it,
    grader.hidden.secret), else ``tests/<hw>/key/secret``."""
    return Path(os.environ[SECRET_ENV]) if os.environ.get(SECRET_ENV) else secret_path(hw.tests_dir)


def passes(hw: Homework, text: str) -> list[str]:
    """What fails on the hidden inputs of the secret ``text``: the reference's and each variant's failed checks."""
    from grader.runner import run_parts

    failed = []
    with tempfile.TemporaryDirectory(prefix="hwsecret-") as tmp:
        path = Path(tmp) / "secret"
        path.write_text(text + "\n", encoding="utf-8")
        before = os.environ.get(SECRET_ENV)
        os.environ[SECRET_ENV] = str(path)
        try:
            for label, impl in [("solutions", "solutions"), *((v.name, str(v)) for v in variants(hw))]:
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
            path = target(hw)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            if hasattr(os, "fchmod"):  # a file that was there keeps its mode through O_CREAT: its owner's only now
                os.fchmod(fd, 0o600)
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
        path = target(hw)
        shown = path.resolve().relative_to(ROOT) if path.resolve().is_relative_to(ROOT) else path
        print(f"wrote {shown}: secret {new(hw, args.tries)}")
    else:
        print(described(hw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
