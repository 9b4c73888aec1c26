"""What a class folder holds to grade: one submission per student's folder of modules or notebook, and in a folder
the work the student did (its modules at the top or in ``homework/<hw>/`` of a clone, or its notebook)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from grader.base import escape
from grader.base.homeworks import ROOT, Homework
from grader.base.results import PartResult, Totals

_IGNORED = {"__pycache__", ".ipynb_checkpoints", ".git", ".pytest_cache"}


@dataclass
class Submission:
    name: str  # as shown: the folder's or notebook's name, printable (grader.base.escape.name)
    path: Path  # a folder of modules or a notebook
    kind: str  # "folder" or "notebook"
    graded: str = ""  # what of the student's folder is graded, as a path inside it ("homework/<hw>/", "hw.ipynb")
    stem: str = ""  # its feedback files' name: safe characters only, unique in the batch
    results: list[PartResult] = field(default_factory=list)
    error: str = ""  # the submission could not be graded at all (the grader's own failure)
    seconds: float = 0.0
    totals: Totals | None = None  # those of ``results``, computed once: where they are set (None: here, of them)

    def __post_init__(self):
        if self.totals is None:
            self.totals = Totals.of(self.results)

    def graded_as(self, results: list[PartResult]) -> None:
        """What grading found, and its totals computed once."""
        self.results, self.totals = results, Totals.of(results)


def find_submissions(folder: Path, hw: Homework) -> list[Submission]:
    """The submissions in ``folder``, sorted by name; files that are not notebooks are skipped."""
    found: list[Submission] = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name.lower()):
        if entry.name.startswith(".") or entry.name in _IGNORED or entry.is_symlink():
            continue
        if entry.is_file() and entry.suffix == ".ipynb":
            found.append(Submission(escape.name(entry.stem), entry, "notebook", escape.name(entry.name)))
        elif entry.is_dir():
            found.append(locate(entry, hw))
    names = [s.name for s in found]
    for sub in found:  # alice/ and alice.ipynb: two rows that say which is which
        if names.count(sub.name) > 1 and sub.path.parent == folder and sub.path.is_file():
            sub.name = escape.name(sub.path.name)
    taken: set[str] = set()
    for sub in found:
        sub.stem = escape.file_stem(sub.name, taken)
    return found


def locate(folder: Path, hw: Homework) -> Submission:
    """The work in a student's folder: its modules (at the top, or in ``homework/<hw>/`` of a clone) or its notebook
    (at the top, or in ``notebooks/``), the one the student worked in first; an error naming the folder when
    there is neither."""
    name = escape.name(folder.name)
    modules = [d for d in (folder, folder / "homework" / hw.name) if _regular_dir(d) and _part_modules(d, hw)]
    notebooks = [p for d in (folder, folder / "notebooks") if _regular_dir(d) for p in sorted(d.glob("*.ipynb"))
                 if not p.name.startswith(".") and not p.is_symlink() and p.is_file()]
    worked = [d for d in modules if _modules_worked(d, hw)] + [p for p in notebooks if _notebook_worked(p, hw)]
    chosen = (worked or modules or notebooks or [None])[0]
    if chosen is None:
        where = ", ".join(f"{p.module}.py" for p in hw.parts[:2])
        return Submission(name, folder, "folder", error=(
            f"в папке {name} не найдено работы: нет модулей ({where}, …) ни в ней, ни в homework/{hw.name}/, "
            "и нет тетрадки .ipynb ни в ней, ни в notebooks/"))
    graded = escape.name(chosen.relative_to(folder).as_posix()) if chosen != folder else "."
    if chosen.is_dir():
        return Submission(name, chosen, "folder", graded + ("/" if graded != "." else ""))
    return Submission(name, chosen, "notebook", graded)


def _regular_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _part_modules(folder: Path, hw: Homework) -> list[Path]:
    return [folder / f"{p.module}.py" for p in hw.parts
            if (folder / f"{p.module}.py").is_file() and not (folder / f"{p.module}.py").is_symlink()]


def _modules_worked(folder: Path, hw: Homework) -> bool:
    """Whether a part module differs from the kit's untouched stub (a file of another size is never read)."""
    def differs(path: Path) -> bool:
        stub = hw.homework_dir / path.name
        if not stub.is_file() or path.stat().st_size != stub.stat().st_size:
            return True
        return path.read_bytes() != stub.read_bytes()

    return any(differs(path) for path in _part_modules(folder, hw))


def _notebook_worked(path: Path, hw: Homework) -> bool:
    """Whether the notebook's code differs from the kit's untouched notebook (outputs aside)."""
    from grader.boundary.loading import code_cells

    kit = ROOT / "notebooks" / f"{hw.name}.ipynb"
    try:
        return not kit.is_file() or code_cells(path) != code_cells(kit)
    except Exception:  # noqa: BLE001 - an unreadable notebook is graded, and the grading says what is wrong
        return True
