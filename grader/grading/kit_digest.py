"""The kit's own files and their digest: the command line compares it before and after each checking process (a kit
changed by a worker, where no namespace keeps it read-only, grades nobody) and records it with every grade."""
from __future__ import annotations

import hashlib
from pathlib import Path

from grader.base.homeworks import ROOT, Homework
from grader.boundary.staging import provided_modules
from grader.grading import hidden_answers


def kit_files(hw: Homework) -> list[Path]:
    """What the checking process imports, stages or configures pytest with from the kit: the grader, the
    homework's checks and their data, its provided modules, and the conftest and pyproject files pytest may read."""
    files = [*sorted((ROOT / "grader").rglob("*.py")), ROOT / "homework" / "check.py", ROOT / "conftest.py",
             ROOT / "pyproject.toml", ROOT / "tests" / "conftest.py",
             *sorted(p for p in hw.tests_dir.iterdir() if p.suffix in (".py", ".toml")),
             *sorted(hw.shared_dir.glob("*.py")), *sorted((hw.tests_dir / "answers").glob("*.json")),
             *sorted((hw.tests_dir / "key").glob("*.py")),
             *sorted(hidden_answers.record_dir(hw.tests_dir).glob("*.json")),  # the key's answers on hidden inputs
             *provided_modules(hw).values(), *(hw.homework_dir / f"{m}.py" for m in provided_modules(hw))]
    return [p for p in dict.fromkeys(files) if p.is_file()]


def kit_digest(hw: Homework) -> str:
    """The SHA-256 of :func:`kit_files`, names and contents (a file outside the kit, the records beside a secret
    HWKIT_SECRET_FILE names, by its whole path)."""
    digest = hashlib.sha256()
    for path in kit_files(hw):
        name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
