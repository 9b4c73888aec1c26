"""Generate the homework's notebook ``notebooks/<hw>.ipynb`` from the single source.

The source is the same as for the stubs: each part's solution module (its SOLUTION regions become
the TODO stubs of :func:`grader.authoring.stubs.make_stub`) and the homework README (each part's section becomes
the part's text), plus the homework's own ``solutions/<hw>/notebook.toml`` when it has one: its plot cells
and the examples of the how-to text (see :func:`load_config`). ``python -m grader.authoring.build`` writes the notebook
through :func:`generated_files`; the output is deterministic (fixed cell ids, no outputs, no timestamps), so the
up-to-date check is stable.

Per part, in the order of ``parts.toml``: the README section, one code cell per top-level function of
the stub module, a check cell ``check("<part>")`` (tag ``check``) and the part's plot cells (tag
``skip-grading``; only for parts that exist). ``--notebook`` grading leaves tagged cells out.

``python -m grader.authoring.notebook_build HW --solved OUT.ipynb`` writes the notebook with the solutions in
place of the TODOs (for the kit's tests and for instructors; never commit it).
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.authoring.stubs import BuildError, make_stub, solved_source
from grader.base import extras, homeworks
from grader.base.homeworks import ROOT, Homework, tomllib

NOTEBOOKS_DIR = ROOT / "notebooks"
CHECK_TAG = "check"
SKIP_TAG = "skip-grading"
NEEDS = ("nbformat", "dev", "building the notebook")  # grader.base.extras: the module, the extra holding it, what for

SETUP_TEXT = """## Настройка

Ячейка ниже находит корень репозитория (папку, где лежат `grader/` и `homework/`) и подключает проверку.
Запускайте тетрадку из папки `notebooks/` репозитория — в Jupyter, JupyterLab и VS Code так и будет.

**Google Colab.** Тетрадке нужен весь репозиторий: проверки и готовые модули лежат в нём. Откройте новую ячейку
в начале и выполните (адрес — ссылка на репозиторий курса):

```
!git clone <адрес репозитория курса> rl-homework
%cd rl-homework/notebooks
%pip install -q -e ..
```

Если тетрадка лежит вне репозитория, укажите путь к нему в переменной окружения `HWKIT_ROOT`."""

SETUP_CODE = '''# Настройка: корень репозитория, пути для import и функция проверки check.
import os
import sys
from pathlib import Path

HOMEWORK = "{hw}"


def find_repo_root():
    """Папка с grader/ и tests/<HOMEWORK>/: HWKIT_ROOT, текущая папка или выше, или установленный пакет grader."""
    candidates = [Path(os.environ["HWKIT_ROOT"])] if os.environ.get("HWKIT_ROOT") else []
    candidates += [Path.cwd(), *Path.cwd().parents]
    try:
        import grader  # есть, если репозиторий установлен: pip install -e .
        candidates.append(Path(grader.__file__).resolve().parent.parent)
    except ImportError:
        pass
    for folder in candidates:
        if (folder / "grader").is_dir() and (folder / "tests" / HOMEWORK / "parts.toml").is_file():
            return folder.resolve()
    raise RuntimeError("Не нашёл корень репозитория. Откройте тетрадку из папки notebooks/ репозитория "
                       "или задайте HWKIT_ROOT; в Colab — см. текст над этой ячейкой.")


REPO = find_repo_root()
for path in (REPO, REPO / "homework" / HOMEWORK):  # grader и готовые модули домашней работы
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import numpy as np

from grader.notebook import check
{plots_import}
print("Репозиторий:", REPO)
'''

HOW_TO = """## Как работать с тетрадкой

1. Выполните ячейку настройки ниже.
2. В каждой части прочитайте условие, допишите функции вместо `# TODO: ваш код` и
   `raise NotImplementedError(...)` и выполните их ячейки.
3. Выполните ячейку проверки части, например `check("{part}")`: она запускает те же проверки, что и
   командная строка, на функциях, которые вы только что определили, и печатает таблицу баллов и разбор
   каждой ошибки (что ожидали, что получили, подсказка). Непройденная проверка не останавливает тетрадку.
   Одна проверка: `check("{check}")`; трассировка ошибок: `check("{part}", verbose=True)`.
{plots_step}
Всю тетрадку можно проверить из корня репозитория:

```bash
python homework/check.py {hw} --notebook notebooks/{hw}.ipynb
```

Так выполняются ячейки с кодом (без выводов; строки `!…` и `%…` пропускаются), кроме ячеек с тегами
`check` и `skip-grading` — это проверки и графики. Долгим экспериментам в своей тетрадке поставьте тег
`skip-grading`. Функции всех частей живут в одном пространстве имён: не называйте свои вспомогательные
функции так же, как функции других частей."""

OUTRO = """## Итог

Все части сразу — из корня репозитория:

```bash
python homework/check.py {hw} --notebook notebooks/{hw}.ipynb
```

Тот же результат даёт работа в модулях `homework/{hw}/*.py` и `python homework/check.py {hw}`."""


PLOTS_STEP = "4. Графики показывают, что делает ваш код (нужен matplotlib: `python -m pip install matplotlib`).\n"


# ---- the homework's own declarations: solutions/<hw>/notebook.toml -------------------------------------

CONFIG_FILE = "notebook.toml"


@dataclass(frozen=True)
class Plot:
    """A plot cell after a part's check cell, with its Markdown text above it; it appears only when the part's
    cells define every function of ``needs``."""
    part: str
    text: str
    code: str
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class NotebookConfig:
    example: str | None = None  # one check, ``part::check``, shown in the how-to text
    plots_module: str | None = None  # a provided module of solutions/<hw>/, imported as ``plots`` by the setup cell
    plots: tuple[Plot, ...] = ()
    repository: str | None = None  # the course repository's address, for the Colab instructions


REPOSITORY_PLACEHOLDER = "<адрес репозитория курса>"


def load_config(hw: Homework) -> NotebookConfig:
    """The homework's ``solutions/<hw>/notebook.toml`` (all keys optional; no file: no plots)::

        example = "part::test_name"        # the check named in the how-to text (default: the first part's first)
        repository = "https://..."         # what Colab clones (default: a placeholder the student fills in)
        plots = "plots"                    # solutions/<hw>/plots.py, imported as `plots` by the setup cell

        [[plot]]                           # one per plot cell, in order
        part = "part"
        needs = ["function"]               # functions of the part the code calls
        text = "**График.** ..."           # Markdown above the cell
        code = "plots.draw(function)"
    """
    path = hw.solutions_dir / CONFIG_FILE
    if not path.is_file():
        return NotebookConfig()
    with path.open("rb") as f:
        data = tomllib.load(f)
    where = str(path.relative_to(ROOT))
    unknown = set(data) - {"example", "plots", "plot", "repository"}
    if unknown:
        raise BuildError(f"{where}: unknown keys {sorted(unknown)}")
    try:
        plots = tuple(Plot(**{**p, "needs": tuple(p.get("needs", ()))}) for p in data.get("plot", []))
    except TypeError as exc:
        raise BuildError(f"{where}: a [[plot]] needs part, text, code and optionally needs ({exc})") from None
    repository = data.get("repository")
    if repository is not None and (not isinstance(repository, str) or not repository.strip() or
                                   any(c.isspace() or c in "'\"`;&|$" for c in repository)):
        raise BuildError(f"{where}: repository must be one address without spaces or shell characters")
    config = NotebookConfig(data.get("example"), data.get("plots"), plots, repository)
    _check_config(hw, config, where)
    return config


def _check_config(hw: Homework, config: NotebookConfig, where: str) -> None:
    ids = {p.id for p in hw.parts}
    named = [p.part for p in config.plots] + ([config.example.partition("::")[0]] if config.example else [])
    wrong = sorted(set(named) - ids)
    if wrong:
        raise BuildError(f"{where}: no part {', '.join(wrong)} in {hw.name}; its parts: {', '.join(sorted(ids))}")
    module = config.plots_module
    if module is not None and (module in hw.modules or not (hw.solutions_dir / f"{module}.py").is_file()):
        raise BuildError(f"{where}: plots = {module!r} must name a provided module of {hw.solutions_dir.name}/")
    if config.plots and module is None:
        raise BuildError(f"{where}: [[plot]] cells call `plots`: name its module (plots = \"...\")")


def _example_check(hw: Homework, config: NotebookConfig, parts) -> str:
    """The check the how-to text names: the declared one, or the first check of the first part."""
    if config.example:
        return config.example
    part = parts[0]
    tests = hw.tests_dir / part.tests
    names = re.findall(r"(?m)^def (test_\w+)\s*\(", tests.read_text(encoding="utf-8")) if tests.is_file() else []
    return f"{part.id}::{names[0] if names else 'имя_проверки'}"


# ---- the source: modules and README -----------------------------------------------------------------

def split_cells(source: str) -> list[tuple[str, str]]:
    """A module as notebook cells: [("header", docstring and imports), (function name, its code), ...].

    Each top-level ``def``/``class`` starts a cell, together with the comments just above it; module-level
    statements after a function stay with it.
    """
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    starts: list[tuple[int, str]] = []  # (0-based first line, name)
    previous_end = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            while first > previous_end and (not lines[first - 1].strip() or lines[first - 1].lstrip().startswith("#")):
                first -= 1
            starts.append((first, node.name))
        previous_end = node.end_lineno
    cells: list[tuple[str, str]] = []
    bounds = [s for s, _ in starts] + [len(lines)]
    head = "".join(lines[: bounds[0]]).strip("\n")
    if head.strip():
        cells.append(("header", head + "\n"))
    for (start, name), end in zip(starts, bounds[1:]):
        text = "".join(lines[start:end]).strip("\n")
        cells.append((name, text + "\n"))
    return cells


def readme_sections(text: str) -> tuple[str, dict[str, str], list[str]]:
    """(the intro before the first ``##`` heading, {part id: its ``##`` section}, [the other ``##`` sections]).

    A part's heading names its id in backticks (``## Часть `dp`: ...``); a ``##`` section without one (such as
    ``## Общие правила``) is common to all parts and goes into the notebook's first cell.
    """
    chunks = re.split(r"(?m)^(?=## )", text)
    intro = chunks[0]
    sections: dict[str, str] = {}
    general: list[str] = []
    for chunk in chunks[1:]:
        heading = chunk.splitlines()[0]
        m = re.search(r"`([\w-]+)`", heading)
        if m is None:
            general.append(chunk.strip())
        elif m.group(1) not in sections:
            sections[m.group(1)] = chunk.strip()
    return intro, sections, general


DETAILS_TAG = re.compile(r"(?m)^(</?)details>[ \t]*$")
SUMMARY = re.compile(r"<summary>[^<\n]+</summary>\n\n")


def check_details(text: str, where: str) -> str:
    """The collapsible blocks (``<details>`` … ``</details>``, «Как проверяется») of a README section, kept intact.

    Each block opens and closes on a line of its own, is not nested, starts with a one-line ``<summary>`` and
    has blank lines around its Markdown body: GitHub, Jupyter and VS Code render the body as Markdown only then.
    Raises BuildError naming the section otherwise; returns the text unchanged.
    """
    depth = 0
    for m in DETAILS_TAG.finditer(text):
        depth += 1 if m.group(1) == "<" else -1
        if depth not in (0, 1):
            raise BuildError(f"README, {where}: </details> without <details>, or a <details> inside another")
        if depth == 1 and not SUMMARY.match(text, m.end() + 1):
            raise BuildError(f"README, {where}: <details> must be followed by one <summary>…</summary> line "
                             "and a blank line")
        if depth == 0 and not text[:m.start()].endswith("\n\n"):
            raise BuildError(f"README, {where}: </details> must follow a blank line")
    if depth:
        raise BuildError(f"README, {where}: <details> without </details>")
    return text


def _intro_cells(hw: Homework, intro: str, general: list[str]) -> str:
    """The README's title, first paragraph and table of parts, then its common sections (``## Общие правила``)."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", intro) if p.strip()]
    title = paragraphs[0] if paragraphs and paragraphs[0].startswith("#") else f"# {hw.name} — {hw.title}"
    body = [p for p in paragraphs[1:2] if not p.startswith(("|", "```"))]
    body += [p for p in paragraphs[2:] if p.startswith("|")]
    return "\n\n".join([title, *body, *(check_details(g, g.splitlines()[0]) for g in general)])


def _part_text(part, sections: dict[str, str]) -> str:
    section = sections.get(part.id)
    if section is None:
        return f"## Часть `{part.id}`: {part.title} — {part.points:g} баллов"
    return check_details(section, f"часть {part.id}")


def _notebook_source(text: str, own: str, siblings: set[str]) -> str:
    """``from <other part> import ...`` at the top level: in the notebook those functions are already defined."""
    out = []
    for line in text.splitlines(keepends=True):
        m = re.match(r"from\s+(\w+)\s+import\s", line)
        if m and m.group(1) in siblings and m.group(1) != own:
            line = f"# {line.rstrip()}  — в тетрадке эти функции определены выше\n"
        out.append(line)
    return "".join(out)


# ---- the notebook ------------------------------------------------------------------------------------

def _nbformat():
    """nbformat, which building the notebook needs (an extra: the base install grades without it)."""
    return extras.require(*NEEDS)


def _md(cell_id: str, text: str):
    cell = _nbformat().v4.new_markdown_cell(text)
    cell["id"] = cell_id
    return cell


def _code(cell_id: str, text: str, tags: tuple[str, ...] = ()):
    cell = _nbformat().v4.new_code_cell(text.rstrip("\n"))
    cell["id"] = cell_id
    if tags:
        cell["metadata"]["tags"] = list(tags)
    return cell


def notebook_parts(hw: Homework):
    """The parts that have a solution module, in the order of parts.toml."""
    return [p for p in hw.parts if (hw.solutions_dir / f"{p.module}.py").is_file()]


def _plots_import(hw: Homework, module: str | None) -> str:
    """The setup cell's line that imports the homework's plots module as ``plots`` (none without one)."""
    if module is None:
        return ""
    alias = "" if module == "plots" else " as plots"
    return f"import {module}{alias}  # графики тетрадки: готовый модуль {module} из homework/{hw.name}/\n"


def _head_cells(hw: Homework, config: NotebookConfig, parts, intro: str, general: list[str]) -> list:
    """The intro (README's title and common sections, the how-to text) and the setup cell."""
    example = _example_check(hw, config, parts)
    how_to = HOW_TO.format(hw=hw.name, part=example.partition("::")[0], check=example,
                           plots_step=PLOTS_STEP if config.plots else "")
    plots_import = _plots_import(hw, config.plots_module)
    return [_md("intro", _intro_cells(hw, intro, general) + "\n\n" + how_to),
            _md("setup-text", SETUP_TEXT.replace(REPOSITORY_PLACEHOLDER, config.repository or REPOSITORY_PLACEHOLDER)),
            _code("setup", SETUP_CODE.format(hw=hw.name, plots_import=plots_import))]


def _part_cells(hw: Homework, part, sections: dict[str, str], siblings: set[str], plots, solved: bool) -> list:
    """A part's task text, one cell per function of its module, its check cell and its plot cells."""
    path = hw.solutions_dir / f"{part.module}.py"
    source = path.read_text(encoding="utf-8")
    text = solved_source(source) if solved else make_stub(source, str(path.relative_to(ROOT)))
    text = _notebook_source(text, part.module, siblings)
    cells = [_md(f"{part.id}-task", _part_text(part, sections))]
    defined = set()
    for name, code in split_cells(text):
        defined.add(name)
        cells.append(_code(f"{part.id}-{name}"[:64], code))
    cells.append(_code(f"{part.id}-check",
                       f"# Проверка части {part.id} — те же проверки, что у\n"
                       f"# python homework/check.py {hw.name} {part.id}\n"
                       f'check("{part.id}")', (CHECK_TAG,)))
    for number, plot in enumerate((p for p in plots if p.part == part.id), start=1):
        if set(plot.needs) <= defined:
            cells.append(_md(f"{part.id}-plot-{number}-text", plot.text))
            cells.append(_code(f"{part.id}-plot-{number}", plot.code, (SKIP_TAG,)))
    return cells


def build_notebook(hw: Homework, solved: bool = False):
    """The homework's notebook: intro and setup, each part's cells, the outro."""
    config = load_config(hw)
    readme = hw.homework_dir / "README.md"
    intro, sections, general = readme_sections(readme.read_text(encoding="utf-8") if readme.is_file() else "")
    parts = notebook_parts(hw)
    siblings = {p.module for p in parts}
    cells = _head_cells(hw, config, parts, intro, general)
    for part in parts:
        cells += _part_cells(hw, part, sections, siblings, config.plots, solved)
    cells.append(_md("outro", OUTRO.format(hw=hw.name)))
    nb = _nbformat().v4.new_notebook(cells=cells)
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    _nbformat().validate(nb)
    return nb


def render(nb) -> str:
    text = _nbformat().writes(nb)
    return text if text.endswith("\n") else text + "\n"


def notebook_path(hw: Homework) -> Path:
    return NOTEBOOKS_DIR / f"{hw.name}.ipynb"


def generated_files(hw: Homework) -> dict[Path, str]:
    """{notebooks/<hw>.ipynb: its text} — empty for a homework without any part's solution module."""
    if not notebook_parts(hw):
        return {}
    return {notebook_path(hw): render(build_notebook(hw))}


def write_solved(hw_name: str, out: Path) -> Path:
    """Write the notebook with the solutions in place of the TODOs (kit tests, instructors)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(render(build_notebook(homeworks.load(hw_name), solved=True)).encode("utf-8"))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.authoring.notebook_build", description=__doc__.splitlines()[0])
    p.add_argument("homework")
    p.add_argument("--solved", metavar="OUT", required=True,
                   help="write the notebook with the solutions kept (do not commit it)")
    args = p.parse_args(argv)
    print("wrote", write_solved(args.homework, Path(args.solved)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
