"""Write the student's copy of the repository: ``python -m grader.authoring.release OUT_DIR [--classroom]``.

The copy holds what a student needs to do and check the homework: the generated stubs, provided modules
and notebook, the task statements, the graded suites and the grader. It is made of the files git tracks when
the kit is a git checkout (an untracked file in the instructor's checkout is never released), otherwise of
every file; either way it leaves out the reference solutions (``solutions/``), the kit's own tests and
typical mistakes (``tests/kit/``), the instructor's tools (stub and notebook building, batch grading, the
Gradescope autograder, this command), the grading-speed benchmark, CI scripts and docs (other benchmarks
stay: a task statement may invite students to run them), and the README's instructor parts (between
``<!-- instructor -->`` and ``<!-- /instructor -->``, and the section ``## For instructors``). Nothing is
written when a generated file is stale or a solution region would leak. ``--classroom`` adds the GitHub
Classroom workflow of docs/github-classroom.md as ``.github/workflows/classroom.yml``.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from grader.authoring import notebook_build
from grader.authoring.build import stale
from grader.base import extras, homeworks
from grader.base.homeworks import ROOT

# What never goes into the student's copy. A pattern with a "/" is a path relative to the repository (a folder
# drops everything under it); one without is a glob matched against every part of a path.
EXCLUDED = [
    "solutions", "tests/kit", "tests/*/key",  # the reference, the kit's tests, the instructor's answer key
    "benchmarks/grading_speed.py", "benchmarks/feedback_quality.py",
    "benchmarks/cliff_margins.py", "benchmarks/kit_suite_cost.py",  # cliff_margins plays Q-learning and SARSA
    "benchmarks/boss_margins.py",  # it reads the instructor's answer key
    "benchmarks/class_report.py", "benchmarks/data", "benchmarks/class_with_burner.py",
    "benchmarks/results_flow.py",  # it grades a class with the reference solutions
    ".benchmarks", ".ci",
    "docs", ".git", ".github",
    "grader/authoring",  # the instructor's tools that make the homework
    "grader/batch.py", "grader/gradescope.py", "grader/grading/submissions.py",  # grading a class
    "grader/grading/public_answers.py", "grader/grading/secret.py", "grader/grading/budget.py", "grader/base/extras.py",
    # the class report: for instructors only
    "grader/reporting/class_report.py", "grader/reporting/class_report.schema.json",
    "*.egg-info", "__pycache__", ".pytest_cache", ".ipynb_checkpoints", "build", "dist", "out", ".venv", "venv",
]
GIT_TIMEOUT = 30  # seconds for one git command
LEAK_MARKERS = ("BEGIN SOLUTION", "END SOLUTION")
LEAK_CHECKED = (".py", ".ipynb", ".md", ".toml")  # the kinds of file searched for them
INSTRUCTOR = re.compile(r"<!-- instructor -->.*?<!-- /instructor -->\n?", re.S)
WORKFLOW = re.compile(r"```yaml\n(# \.github/workflows/classroom\.yml.*?)```", re.S)


class ReleaseError(Exception):
    pass


def git_files(root: Path) -> list[str] | None:
    """The files git tracks under ``root`` (relative POSIX paths) when ``root`` is the top of a git checkout,
    else None."""
    def git(*args: str) -> subprocess.CompletedProcess | None:
        try:
            return subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=GIT_TIMEOUT)
        except (OSError, subprocess.SubprocessError):
            return None
    top = git("rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0 or Path(os.fsdecode(top.stdout.strip())).resolve() != Path(root).resolve():
        return None
    listed = git("ls-files", "-z")
    if listed is None or listed.returncode != 0:
        return None
    return [name for name in listed.stdout.decode("utf-8").split("\0") if name]


def excluded(rel: str, patterns: list[str] = EXCLUDED) -> bool:
    """Whether the relative POSIX path ``rel`` matches one of ``patterns`` (as :data:`EXCLUDED` reads them)."""
    parts = rel.split("/")
    for pattern in patterns:
        if "/" in pattern:
            if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern + "/*"):
                return True
        elif any(fnmatch.fnmatch(part, pattern) for part in parts):
            return True
    return False


def _every_file(root: Path, patterns: list[str]) -> list[str]:
    """Every file under ``root`` outside ``patterns``, without entering an excluded folder."""
    names = []
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root).as_posix()
        prefix = "" if rel == "." else rel + "/"
        dirs[:] = sorted(d for d in dirs if not excluded(prefix + d, patterns))
        names += [prefix + f for f in files]
    return names


def select_files(root: Path = ROOT, patterns: list[str] = EXCLUDED) -> list[str]:
    """The kit's files to ship (relative POSIX paths, sorted): those git tracks when ``root`` is a git checkout,
    otherwise every file; either way without those matching ``patterns``."""
    root = Path(root)
    names = git_files(root)
    if names is None:
        names = _every_file(root, patterns)
    return sorted(n for n in names if (root / n).is_file() and not excluded(n, patterns))


def student_files(root: Path = ROOT) -> list[Path]:
    """The repository's files that go into the student's copy (relative paths, sorted)."""
    return [Path(name) for name in select_files(root)]


def student_readme(text: str) -> str:
    """The top-level README without its instructor parts: marked regions and the section ``## For instructors``
    (up to the next second-level heading)."""
    text = INSTRUCTOR.sub("", text)
    text = re.sub(r"^## For instructors\n.*?(?=^## |\Z)", "", text, flags=re.S | re.M)
    return text.rstrip() + "\n"


def student_content(rel: Path) -> bytes:
    """A file's bytes as the student gets them: the README without instructor sections; pyproject.toml without
    the kit's own parts (marked ``# instructor`` … ``# /instructor``), pytest's default test path pointing at the
    graded suites (the kit's own tests are not in the copy)."""
    data = (ROOT / rel).read_bytes()
    if rel.as_posix() == "README.md":
        return student_readme(data.decode("utf-8")).encode("utf-8")
    if rel.as_posix() == "pyproject.toml":  # without the kit's own tests, style and dev extra
        text = re.sub(r"^[ \t]*# instructor.*?^[ \t]*# /instructor\n", "", data.decode("utf-8"), flags=re.M | re.S)
        text = re.sub(r'^testpaths = \["tests/kit"\]', 'testpaths = ["tests"]', text, flags=re.M)
        return text.encode("utf-8")
    return data


def classroom_workflow() -> str:
    """The workflow YAML shown in docs/github-classroom.md."""
    doc = ROOT / "docs" / "github-classroom.md"
    m = WORKFLOW.search(doc.read_text(encoding="utf-8")) if doc.is_file() else None
    if not m:
        raise ReleaseError(f"no workflow block (```yaml starting with '# .github/workflows/classroom.yml') in {doc}")
    return m.group(1)


def stale_files() -> list[str]:
    """Every homework's generated files that are out of date (paths relative to the kit). Without nbformat (the
    notebook's freshness cannot be checked): the one line of grader.base.extras naming the extra, and exit 2."""
    module, extra, _ = notebook_build.NEEDS
    extras.require(module, extra, "checking that the notebook is up to date (--force skips the check)")
    return [str(path.relative_to(ROOT)) for hw in homeworks.available() for path in stale(hw)]


def leaks(contents: dict[str, bytes]) -> list[str]:
    """The files of ``contents`` (relative POSIX path: bytes) that hold a solution region's marker."""
    return [rel for rel, data in contents.items()
            if rel.endswith(LEAK_CHECKED) and any(m.encode() in data for m in LEAK_MARKERS)]


def key_leaks(contents: dict[str, bytes]) -> list[str]:
    """What of the instructor's answer key ``contents`` (relative POSIX path: bytes) would give away: a file of a key
    folder, the secret of the hidden inputs, or the body of a key function copied into a shipped module."""
    from grader.grading.hidden import DEFAULT_SECRET, secret

    found = [rel for rel in contents if fnmatch.fnmatchcase(rel, "tests/*/key/*")]
    bodies: dict[str, str] = {}
    for name in homeworks.available():
        hw = homeworks.load(name)
        text = secret(hw.tests_dir)
        if text != DEFAULT_SECRET:
            found += [f"{rel} (the secret)" for rel, data in contents.items() if text.encode() in data]
        for path in sorted((hw.tests_dir / "key").glob("*.py")):
            bodies.update({body: f"{path.name}:{fn}" for fn, body in _function_bodies(path.read_bytes()).items()})
    for rel, data in contents.items():
        if rel.endswith(".py"):
            found += [f"{rel}:{fn} (the body of {bodies[body]})" for fn, body in _function_bodies(data).items()
                      if body in bodies]
    return found


def _function_bodies(source: bytes) -> dict[str, str]:
    """Each function of a module (nested ones too), as the text of its body without docstring and comments."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body[1:] if (node.body and isinstance(node.body[0], ast.Expr)
                                     and isinstance(getattr(node.body[0], "value", None), ast.Constant)) else node.body
            text = "\n".join(ast.unparse(statement) for statement in body)
            if text.count("\n") >= 1 or len(text) > 60:  # a one-line `return x` is nobody's answer
                out[node.name] = text
    return out


def release(out: Path, classroom: bool = False, force: bool = False) -> list[Path]:
    """Write the student's copy into ``out`` (which must not exist or be empty); return the files written."""
    out = Path(out).resolve()
    if out == ROOT or ROOT in out.parents:
        raise ReleaseError(f"{out} is inside the repository; choose a folder outside it")
    if out.exists() and any(out.iterdir()):
        raise ReleaseError(f"{out} is not empty")
    out_of_date = [] if force else stale_files()
    if out_of_date:
        raise ReleaseError("generated files are out of date; run `python -m grader.authoring.build` first: "
                           + ", ".join(out_of_date))
    contents = {rel.as_posix(): student_content(rel) for rel in student_files()}
    leaking = leaks(contents)
    if leaking:
        raise ReleaseError("solution regions would leak into the student's copy: " + ", ".join(leaking))
    keys = key_leaks(contents)
    if keys:
        raise ReleaseError("the answer key would leak into the student's copy: " + ", ".join(keys))
    written = []
    for rel, data in contents.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        shutil.copymode(ROOT / rel, target)
        written.append(Path(rel))
    if classroom:
        rel = Path(".github/workflows/classroom.yml")
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(classroom_workflow().encode("utf-8"))
        written.append(rel)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.authoring.release", description=__doc__.splitlines()[0])
    p.add_argument("out", help="the folder to write the student's copy into (new or empty, outside the repository)")
    p.add_argument("--classroom", action="store_true", help="add .github/workflows/classroom.yml (GitHub Classroom)")
    p.add_argument("--force", action="store_true", help="do not refuse when generated files are stale")
    args = p.parse_args(argv)
    try:
        written = release(Path(args.out), classroom=args.classroom, force=args.force)
    except ReleaseError as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 1
    print(f"wrote the student's copy to {args.out}: {len(written)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
