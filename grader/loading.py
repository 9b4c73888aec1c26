"""Loading the implementation under test: a folder of modules, or a notebook's code cells."""
from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import traceback
import types
from pathlib import Path


class ModuleLoadError(Exception):
    """The student's module could not be loaded; the message says where and why, in Russian."""


def describe_exception(exc: BaseException, inside: Path | None = None) -> str:
    """``ExcType: message (file.py, строка N, в func)`` naming the deepest frame inside ``inside``."""
    if isinstance(exc, SyntaxError) and exc.filename:
        text = (exc.text or "").strip()
        return (f"{type(exc).__name__} в {Path(exc.filename).name}, строка {exc.lineno}: {exc.msg}"
                + (f"\n    {text}" if text else ""))
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if inside is not None:
        inside = inside.resolve()
        own = [f for f in frames if _is_under(f.filename, inside)]
        if own:
            f = own[-1]
            where = f" ({Path(f.filename).name}, строка {f.lineno}, в {f.name})"
    elif frames:
        f = frames[-1]
        where = f" (строка {f.lineno}, в {f.name})"
    message = str(exc).strip()
    if len(message) > 300:
        message = message[:300] + "…"
    return f"{type(exc).__name__}: {message}{where}" if message else f"{type(exc).__name__}{where}"


def _is_under(filename: str, folder: Path) -> bool:
    try:
        return Path(filename).resolve().is_relative_to(folder)
    except (OSError, ValueError):
        return False


class FolderImplementation:
    """Modules ``<folder>/<name>.py``, loaded by path under their plain names."""

    def __init__(self, folder: Path):
        self.folder = Path(folder).resolve()
        self._modules: dict[str, types.ModuleType | ModuleLoadError] = {}

    def describe(self) -> str:
        return str(self.folder)

    def module(self, name: str) -> types.ModuleType:
        if name not in self._modules:
            self._modules[name] = self._load(name)
        result = self._modules[name]
        if isinstance(result, ModuleLoadError):
            raise result
        return result

    def _load(self, name: str) -> types.ModuleType | ModuleLoadError:
        path = self.folder / f"{name}.py"
        if not path.is_file():
            return ModuleLoadError(f"нет файла {name}.py в {self.folder}")
        if str(self.folder) not in sys.path:
            sys.path.insert(0, str(self.folder))  # so that `import envs` inside the student's module works
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:  # noqa: BLE001 - SystemExit at top level is the student's bug too
            sys.modules.pop(name, None)
            if isinstance(exc, KeyboardInterrupt):
                raise
            return ModuleLoadError(f"не удалось загрузить {name}.py: {describe_exception(exc, self.folder)}")
        return module


SKIP_TAGS = {"check", "skip-grading"}


def code_cells(notebook_path: Path) -> list[tuple[int, str]]:
    """The notebook's code cells to grade, as (cell number from 1, source without shell and magic lines).

    Cells tagged ``check`` or ``skip-grading`` (the in-notebook check cells, plots, long runs) are left out.
    """
    import nbformat

    nb = nbformat.read(str(notebook_path), as_version=4)
    cells = []
    for number, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        if SKIP_TAGS & set(cell.get("metadata", {}).get("tags", [])):
            continue
        source = cell.source
        if source.lstrip().startswith("%%"):
            continue
        lines = [("pass  # " + line) if line.lstrip().startswith(("!", "%")) else line
                 for line in source.splitlines()]
        cells.append((number, "\n".join(lines)))
    return cells


class NotebookImplementation:
    """Every function a notebook defines, in one namespace: each part's module is that namespace."""

    def __init__(self, path: Path):
        self.path = Path(path).resolve()
        self.cell_errors: list[str] = []
        self._namespace: types.ModuleType | None = None
        self._error: ModuleLoadError | None = None

    def describe(self) -> str:
        return str(self.path)

    def module(self, name: str) -> types.ModuleType:
        if self._namespace is None and self._error is None:
            self._execute()
        if self._error is not None:
            raise self._error
        return self._namespace

    def _execute(self) -> None:
        try:
            cells = code_cells(self.path)
        except Exception as exc:  # noqa: BLE001 - an unreadable notebook is the student's to fix
            self._error = ModuleLoadError(f"не удалось прочитать тетрадку {self.path.name}: {exc}")
            return
        module = types.ModuleType("notebook")
        module.__file__ = str(self.path)
        sys.modules["notebook"] = module
        with _working_directory(self.path.parent):
            for number, source in cells:
                try:
                    code = compile(source, f"<ячейка {number}>", "exec")
                    exec(code, module.__dict__)
                except BaseException as exc:  # noqa: BLE001
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    first = next((ln for ln in source.splitlines() if ln.strip()), "")
                    self.cell_errors.append(f"ячейка {number} («{first.strip()[:60]}»): {_cell_error(exc)}")
        self._namespace = module


def _cell_error(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}, строка {exc.lineno}: {exc.msg}"
    return describe_exception(exc)


@contextlib.contextmanager
def _working_directory(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def implementation(spec: str | os.PathLike) -> FolderImplementation | NotebookImplementation:
    path = Path(spec)
    if path.suffix == ".ipynb":
        return NotebookImplementation(path)
    return FolderImplementation(path)
