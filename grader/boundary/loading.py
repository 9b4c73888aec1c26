"""Loading the implementation under test: a folder of modules, or a notebook's code cells."""
from __future__ import annotations

import builtins
import contextlib
import importlib.util
import json
import os
import re
import sys
import traceback
import types
from pathlib import Path

from grader.base.escape import one_line
from grader.boundary.tracing import Entered


class ModuleLoadError(Exception):
    """The student's module could not be loaded; the message says where and why, in Russian."""


class MissingFunction(AttributeError):
    """A check asked a notebook for a function it does not define; the message says so, in Russian."""


class _Notebook(types.ModuleType):
    def entered(self) -> dict[str, list[str]]:
        """Function called in this check -> the notebook's other functions those calls went through (the live
        namespace's snapshot traces them: grader.boundary.tracing)."""
        tracer = self.__dict__.get("__entered__")
        return tracer.calls if tracer is not None else {}


def _notebook_module() -> types.ModuleType:
    """The module standing for a notebook: asking it for a name it lacks raises :class:`MissingFunction`."""
    module = _Notebook("notebook")

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise MissingFunction(f"в тетрадке не определено «{name}»: выполните ячейку с этой функцией "
                              "(и ячейки выше) или проверьте, что имя написано так же, как в задании")

    module.__getattr__ = __getattr__
    return module


def describe_exception(exc: BaseException, inside: Path | None = None) -> str:
    """``ExcType: message (file.py, строка N, в func)`` naming the deepest frame inside ``inside``: one line, every name
    and message in it escaped (grader.base.escape.one_line)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        text = one_line((exc.text or "").strip(), 200)
        return (f"{type(exc).__name__} в {one_line(Path(exc.filename).name)}, строка {exc.lineno}: "
                f"{one_line(exc.msg)}" + (f": «{text}»" if text else ""))
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if inside is not None:
        inside = inside.resolve()
        own = [f for f in frames if _is_under(f.filename, inside) or f.filename.startswith("<ячейка")]
        if own:
            f = own[-1]
            where = f" ({one_line(Path(f.filename).name)}, строка {f.lineno}, в {one_line(f.name)})"
    elif frames:
        f = frames[-1]
        where = f" (строка {f.lineno}, в {one_line(f.name)})"
    message = one_line(str(exc).strip(), 300)
    kind = one_line(type(exc).__name__, 80)
    return f"{kind}: {message}{where}" if message else f"{kind}{where}"


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
    A notebook in format 4 is read as the JSON it is (each worker reads it: importing nbformat would cost 0.13 s
    of CPU per worker); an older format is converted by nbformat.
    """
    with open(notebook_path, encoding="utf-8") as f:
        nb = json.load(f)
    if not (isinstance(nb, dict) and nb.get("nbformat") == 4 and isinstance(nb.get("cells"), list)):
        try:
            import nbformat
        except ImportError:
            raise ModuleLoadError("тетрадка не в формате 4: пересохраните её в Jupyter или установите nbformat "
                                  "(python -m pip install -e \".[notebook]\")") from None
        nb = nbformat.read(str(notebook_path), as_version=4)
    cells = []
    for number, cell in enumerate(nb["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        metadata = cell.get("metadata")
        if SKIP_TAGS & set(metadata.get("tags", []) if isinstance(metadata, dict) else []):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if source.lstrip().startswith("%%"):
            continue
        cells.append((number, "\n".join(_plain_python(line) for line in source.splitlines())))
    return cells


_MAGIC_ASSIGN = re.compile(r"^(\s*)([\w.\[\], ]+?)\s*=\s*[!%]")
_HELP = re.compile(r"^\s*(\?{1,2}[\w.]+|[\w.]+\?{1,2})\s*$")


def _plain_python(line: str) -> str:
    """A shell (``!ls``), magic (``%time``) or help (``np.mean?``) line becomes ``pass``, indentation kept."""
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if stripped.startswith(("!", "%")) or _HELP.match(line):
        return f"{indent}pass  # {stripped}"
    m = _MAGIC_ASSIGN.match(line)
    if m:
        return f"{indent}{m.group(2)} = None  # {stripped}"
    return line


class _ProvidedModules:
    """For an implementation holding only the parts' functions (a notebook): the homework's provided
    modules (``envs``, ...) that tests ask for come from the notebook's own ``import envs`` when it did
    one, otherwise from the homework's folder. Without :meth:`use_provided`, every name is the notebook."""

    _parts: set[str] | None = None
    _provided: FolderImplementation | None = None

    def use_provided(self, part_modules: set[str], homework_dir: Path) -> None:
        self._parts = set(part_modules)
        if self._provided is None or self._provided.folder != Path(homework_dir).resolve():
            self._provided = FolderImplementation(homework_dir)

    def _is_provided(self, name: str) -> bool:
        return self._parts is not None and name not in self._parts

    def _provided_module(self, namespace: dict, name: str) -> types.ModuleType:
        value = namespace.get(name)
        if isinstance(value, types.ModuleType):
            return value
        loaded = sys.modules.get(name)
        folder = self._provided.folder
        if isinstance(loaded, types.ModuleType) and _is_under(getattr(loaded, "__file__", None) or "", folder):
            return loaded
        return self._provided.module(name)


class NotebookImplementation(_ProvidedModules):
    """Every function a notebook defines, in one namespace: each part's module is that namespace."""

    def __init__(self, path: Path):
        self.path = Path(path).resolve()
        self.cell_errors: list[str] = []
        self._namespace: types.ModuleType | None = None
        self._error: ModuleLoadError | None = None


    def module(self, name: str) -> types.ModuleType:
        if self._namespace is None and self._error is None:
            self._execute()
        if self._error is not None:
            raise self._error
        if self._is_provided(name):
            return self._provided_module(self._namespace.__dict__, name)
        return self._namespace

    def _execute(self) -> None:
        try:
            cells = code_cells(self.path)
        except Exception as exc:  # noqa: BLE001 - an unreadable notebook is the student's to fix
            self._error = ModuleLoadError(f"не удалось прочитать тетрадку {self.path.name}: {exc}")
            return
        module = _notebook_module()
        module.__file__ = str(self.path)
        module.display = _display  # IPython's builtin, so that a cell calling display(...) still runs
        sys.modules["notebook"] = module
        with working_directory(self.path.parent):
            for number, source in cells:
                try:
                    code = compile(source, f"<ячейка {number}>", "exec")
                    exec(code, module.__dict__)
                except BaseException as exc:  # noqa: BLE001
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    first = next((ln for ln in source.splitlines() if ln.strip()), "")
                    self.cell_errors.append(f"ячейка {number} («{one_line(first.strip(), 60)}»): {_cell_error(exc)}")
        self._namespace = module


class NamespaceImplementation(_ProvidedModules):
    """The functions of a live namespace (a running notebook's globals): ``grader.notebook.check``.

    Each part's module is a snapshot of the namespace taken when the checks start; the student's
    code is recognised in a traceback by the files its functions were compiled from (a notebook's cells).
    """

    def __init__(self, namespace: dict):
        self.namespace = namespace
        self._module: types.ModuleType | None = None
        self.entered = Entered()  # the notebook's functions each call went through (grader.boundary.tracing)


    def module(self, name: str) -> types.ModuleType:
        if self._is_provided(name):
            return self._provided_module(self.namespace, name)
        if self._module is None:
            module = _notebook_module()
            module.__dict__.update({k: v for k, v in self.namespace.items()
                                    if not (k.startswith("__") and k.endswith("__"))})
            module.__dict__["__builtins__"] = builtins  # the globals of the notebook's functions, rebound here
            module.__dict__["__entered__"] = self.entered
            home = self.namespace.get("__name__")  # functions defined in the notebook, not imported into it
            self._module = self.entered.trace(module, lambda f: f.__module__ == home, rebind=True)
        return self._module

    def _own_files(self) -> set[str]:
        files = set()
        home = self.namespace.get("__name__")  # functions defined in the notebook, not imported into it
        for value in list(self.namespace.values()):
            if isinstance(value, types.FunctionType) and value.__module__ == home:
                files.add(value.__code__.co_filename)
            elif isinstance(value, type) and value.__module__ == home:
                for attr in vars(value).values():
                    if isinstance(attr, types.FunctionType):
                        files.add(attr.__code__.co_filename)
        return files

    def student_frame(self, exc: BaseException) -> traceback.FrameSummary | None:
        """The deepest frame of the traceback that runs the notebook's own code, if any."""
        own = self._own_files()
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in own]
        return frames[-1] if frames else None

    def describe_error(self, exc: BaseException) -> str:
        """``ExcType: message (в функции f, строка N её ячейки)``."""
        frame = self.student_frame(exc)
        message = one_line(str(exc).strip(), 300)
        text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
        if frame is not None:
            text += f" (в функции {one_line(frame.name)}, строка {frame.lineno} её ячейки)"
        return text


def _cell_error(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}, строка {exc.lineno}: {one_line(exc.msg)}"
    return describe_exception(exc)


def _display(*objects, **kwargs) -> None:
    for obj in objects:
        print(repr(obj))


@contextlib.contextmanager
def working_directory(path: Path):
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
