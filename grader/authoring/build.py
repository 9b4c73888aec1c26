"""Generate the student's files from the single source in ``solutions/<hw>/``.

``python -m grader.authoring.build [HW ...]`` writes ``homework/<hw>/*.py`` (the stubs of :mod:`grader.authoring.stubs`;
a module without solution regions is copied as provided code), the notebook, when the homework has one
(:mod:`grader.authoring.notebook_build`), and the answer records of a part whose checks, key or reference changed
(:mod:`grader.grading.public_answers`) and the key's answers on hidden inputs when missing or stale
(:mod:`grader.grading.hidden_answers`), and the parts' CPU budgets when a part's limit changed
(:mod:`grader.grading.budget`); ``--check`` writes nothing and exits 1 when a generated file is out of date. Building
the notebook needs nbformat (the ``dev`` extra): without it ``--check`` checks the rest, then says in one line what to
install and exits 2, and the build writes nothing and says the same.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.authoring import notebook_build
from grader.authoring.stubs import BuildError, make_stub
from grader.base import extras, homeworks
from grader.base.homeworks import ROOT
from grader.grading import budget, hidden_answers, key, public_answers
from grader.grading.public_answers import AnswersError, keyed_parts, stale_sources


def generated_files(hw_name: str, notebook: bool = True) -> dict[Path, str]:
    """Every file the build writes for a homework, with its content (without the notebook unless ``notebook``)."""
    hw = homeworks.load(hw_name)
    files: dict[Path, str] = {}
    for path in sorted(hw.solutions_dir.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        files[hw.homework_dir / path.name] = make_stub(source, str(path.relative_to(ROOT)))
    if notebook:
        files.update(notebook_build.generated_files(hw))
    return files


def build(hw_name: str, check: bool = False, notebook: bool = True) -> list[Path]:
    """Write the homework's out-of-date generated files (none with ``check``); return them."""
    out_of_date = [(path, text) for path, text in generated_files(hw_name, notebook).items()
                   if not path.is_file() or path.read_text(encoding="utf-8") != text]
    if not check:
        for path, text in out_of_date:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))  # "\n" line ends on every platform
    return [path for path, _ in out_of_date]


def records(hw_name: str, check: bool = False) -> list[Path]:
    """The answer records (grader.grading.public_answers) made from other sources than today's, then the key's answers
    on the hidden inputs of the secret in force when missing or stale (grader.grading.hidden_answers); remade unless
    ``check``."""
    hw = homeworks.load(hw_name)
    out = stale_sources(hw)
    if not check:
        for path in out:
            part = next(p for p in keyed_parts(hw) if key.answers_path(hw.tests_dir, p.module) == path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(public_answers.text(hw, part, public_answers.record(hw, part)).encode("utf-8"))
    return out + hidden_records(hw, check)


def hidden_records(hw: homeworks.Homework, check: bool = False) -> list[Path]:
    """The records of the key's answers on hidden inputs that are missing or stale; remade unless ``check``
    (grader.grading.secret.record: the reference's grade on hidden inputs, which must pass)."""
    from grader.grading import secret

    stale = hidden_answers.problems(hw.tests_dir, [p.module for p in keyed_parts(hw)])
    if stale and not check:
        failed, _ = secret.record(hw)
        if failed:
            raise AnswersError(f"the reference fails {len(failed)} check(s) on hidden inputs, e.g. {failed[0]}: the "
                               "key's answers on them are not recorded")
    return [hidden_answers.record_path(hw.tests_dir, part) for part in stale]


def budgets(hw_name: str, check: bool = False) -> list[Path]:
    """``parts.toml`` when a part's recorded CPU budget is stale (grader.grading.budget); remade unless ``check``."""
    hw = homeworks.load(hw_name)
    out = budget.stale(hw)
    if out and not check:
        budget.remake(hw)
    return out


def stale(hw_name: str) -> list[Path]:
    """Generated files that differ from what the build would write now, answer records made from other
    sources than today's (grader.grading.public_answers: ``python -m grader.grading.public_answers`` remakes them), and
    a ``parts.toml`` whose CPU budgets are stale (grader.grading.budget)."""
    hw = homeworks.load(hw_name)
    return build(hw_name, check=True) + stale_sources(hw) + budget.stale(hw)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.authoring.build", description=__doc__.splitlines()[0])
    p.add_argument("homeworks", nargs="*", help="default: all")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when something is out of date")
    args = p.parse_args(argv)
    names = args.homeworks or homeworks.available()
    no_notebook = extras.missing(*notebook_build.NEEDS)
    if no_notebook and not args.check:
        print(no_notebook, file=sys.stderr)  # nothing written: stubs newer than the notebook would be a stale tree
        return 2
    try:
        out_of_date = [path for name in names for path in build(name, args.check, notebook=not no_notebook)]
        out_of_date += [path for name in names for path in records(name, args.check)]
        out_of_date += [path for name in names for path in budgets(name, args.check)]
    except (BuildError, homeworks.UsageError, AnswersError, budget.BudgetError) as exc:
        print(f"build: {exc}", file=sys.stderr)
        return 2
    for path in out_of_date:
        print(("out of date: " if args.check else "wrote ") + str(path.relative_to(ROOT) if path.is_relative_to(ROOT)
                                                                   else path))
    if args.check and not out_of_date:
        n_files = sum(len(generated_files(name, notebook=not no_notebook)) for name in names)
        print(f"up to date: the {n_files} generated files of {', '.join(names)} match solutions/ and the task "
              "statement" + (" (the notebook not checked)" if no_notebook else ""))
    if no_notebook:  # the rest is checked; the notebook could not be
        print(no_notebook, file=sys.stderr)
        return 2
    return 1 if args.check and out_of_date else 0


if __name__ == "__main__":
    sys.exit(main())
