"""Write the student's copy of the repository: ``python -m grader.release OUT_DIR [--classroom]``.

The copy holds what a student needs to do and check the homework: the generated stubs and notebook,
the task statements, the graded suites and the grader. It leaves out the reference solutions
(``solutions/``), the kit's own tests and typical mistakes (``tests/kit/``), the instructor's tools
(stub building, batch grading, this command), the grading-speed benchmark, CI scripts and docs (the Boss's
PPO-vs-REINFORCE benchmark stays: the task statement invites students to run it), and the README's
instructor parts (between ``<!-- instructor -->`` and ``<!-- /instructor -->``, and the section
``## For instructors``). Nothing is written when a generated file is stale or a solution region
would leak. ``--classroom`` adds the GitHub Classroom workflow of docs/github-classroom.md as
``.github/workflows/classroom.yml``.
"""
from __future__ import annotations

import argparse
import fnmatch
import re
import shutil
import sys
from pathlib import Path

from grader import homeworks
from grader.homeworks import ROOT

# paths relative to the repository, as glob patterns; a folder pattern drops everything under it
EXCLUDED = [
    "solutions", "tests/kit", "benchmarks/grading_speed.py", "benchmarks/feedback_quality.py", ".benchmarks", ".ci",
    "docs", ".git", ".github",
    "grader/build.py", "grader/notebook_build.py", "grader/batch.py", "grader/release.py",
    "*.egg-info", "__pycache__", ".pytest_cache", ".ipynb_checkpoints", "build", "dist", "out", ".venv", "venv",
]
LEAK_MARKERS = ("BEGIN SOLUTION", "END SOLUTION")
INSTRUCTOR = re.compile(r"<!-- instructor -->.*?<!-- /instructor -->\n?", re.S)
WORKFLOW = re.compile(r"```yaml\n(# \.github/workflows/classroom\.yml.*?)```", re.S)


class ReleaseError(Exception):
    pass


def _excluded(rel: str) -> bool:
    parts = rel.split("/")
    for pattern in EXCLUDED:
        if "/" in pattern:
            if rel == pattern or rel.startswith(pattern + "/"):
                return True
        elif any(fnmatch.fnmatch(part, pattern) for part in parts):
            return True
    return False


def student_files(root: Path = ROOT) -> list[Path]:
    """The repository's files that go into the student's copy (relative paths, sorted)."""
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not _excluded(rel):
            out.append(Path(rel))
    return out


def student_readme(text: str) -> str:
    """The top-level README without its instructor parts: marked regions and the section ``## For instructors``
    (up to the next second-level heading)."""
    text = INSTRUCTOR.sub("", text)
    text = re.sub(r"^## For instructors\n.*?(?=^## |\Z)", "", text, flags=re.S | re.M)
    return text.rstrip() + "\n"


def _student_content(rel: Path) -> bytes:
    """A file's bytes as the student gets them: the README without instructor sections; pytest's default
    test path pointing at the graded suites (the kit's own tests are not in the copy)."""
    data = (ROOT / rel).read_bytes()
    if rel.as_posix() == "README.md":
        return student_readme(data.decode("utf-8")).encode("utf-8")
    if rel.as_posix() == "pyproject.toml":
        text = re.sub(r'^testpaths = \["tests/kit"\]', 'testpaths = ["tests"]', data.decode("utf-8"), flags=re.M)
        return text.encode("utf-8")
    return data


def classroom_workflow() -> str:
    """The workflow YAML shown in docs/github-classroom.md."""
    doc = ROOT / "docs" / "github-classroom.md"
    m = WORKFLOW.search(doc.read_text(encoding="utf-8")) if doc.is_file() else None
    if not m:
        raise ReleaseError(f"no workflow block (```yaml starting with '# .github/workflows/classroom.yml') in {doc}")
    return m.group(1)


def release(out: Path, classroom: bool = False, force: bool = False) -> list[Path]:
    """Write the student's copy into ``out`` (which must not exist or be empty); return the files written."""
    from grader.build import stale  # an instructor tool: present in the kit, absent from the copy

    out = Path(out).resolve()
    if out == ROOT or ROOT in out.parents:
        raise ReleaseError(f"{out} is inside the repository; choose a folder outside it")
    if out.exists() and any(out.iterdir()):
        raise ReleaseError(f"{out} is not empty")
    if not force:
        stale_files = [str(p.relative_to(ROOT)) for hw in homeworks.available() for p in stale(hw)]
        if stale_files:
            raise ReleaseError("generated files are out of date; run `python -m grader.build` first: "
                               + ", ".join(stale_files))
    contents = {rel: _student_content(rel) for rel in student_files()}
    leaks = [str(rel) for rel, data in contents.items() if rel.suffix in (".py", ".ipynb", ".md", ".toml")
             and any(m.encode() in data for m in LEAK_MARKERS)]
    if leaks:
        raise ReleaseError("solution regions would leak into the student's copy: " + ", ".join(leaks))
    written = []
    for rel, data in contents.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        shutil.copymode(ROOT / rel, target)
        written.append(rel)
    if classroom:
        rel = Path(".github/workflows/classroom.yml")
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(classroom_workflow().encode("utf-8"))
        written.append(rel)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.release", description=__doc__.splitlines()[0])
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
