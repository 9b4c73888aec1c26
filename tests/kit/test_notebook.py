"""The homework's notebook: generated from the single source, runs top to bottom, graded in and out of it.

Two kernel runs (the solved notebook, the untouched one) and three command-line gradings; the rest is fast.
"""
import contextlib
import dataclasses
import importlib.util
import inspect
import io
import json
import re
import sys
import types

import nbformat
import numpy as np
import pytest

from grader.authoring import notebook_build
from grader.authoring.notebook_build import (
    CHECK_TAG,
    SKIP_TAG,
    build_notebook,
    load_config,
    notebook_parts,
    notebook_path,
    render,
    write_solved,
)
from grader.authoring.stubs import BuildError, make_stub
from grader.base import homeworks
from grader.base.homeworks import ROOT
from grader.boundary.loading import code_cells
from grader.notebook import check
from kit import HW, run_check

pytestmark = pytest.mark.slow  # grades whole homeworks: left out of the everyday loop (-m "not slow")

HOMEWORK = homeworks.load(HW)
NOTEBOOK = notebook_path(HOMEWORK)
PARTS = notebook_parts(HOMEWORK)


def _tags(cell) -> set:
    return set(cell.get("metadata", {}).get("tags", []))


def _stream(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def _errors(nb) -> list:
    return [(c.id, o.get("ename"), o.get("evalue")) for c in nb.cells if c.cell_type == "code"
            for o in c.outputs if o.get("output_type") == "error"]


def _execute(path):
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(str(path), as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()  # raises CellExecutionError if any cell raises: "runs top to bottom" is part of the test
    return nb


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def solved_path(tmp_path_factory):
    return write_solved(HW, tmp_path_factory.mktemp("solved") / f"{HW}-solved.ipynb")


@pytest.fixture(scope="module")
def solved_run(solved_path):
    return _execute(solved_path)


@pytest.fixture(scope="module")
def untouched_run():
    return _execute(NOTEBOOK)


# ---- the generated file ---------------------------------------------------------------------------

def test_notebook_exists_for_every_part_and_is_deterministic():
    assert PARTS, "no part of the homework has a solution module"
    assert NOTEBOOK.is_file(), f"run `python -m grader.authoring.build {HW}`"
    assert render(build_notebook(HOMEWORK)) == render(build_notebook(HOMEWORK))
    nb = nbformat.reads(NOTEBOOK.read_text(encoding="utf-8"), as_version=4)
    nbformat.validate(nb)
    ids = [c.id for c in nb.cells]
    assert len(ids) == len(set(ids)), "cell ids must be unique"
    checks = [c for c in nb.cells if CHECK_TAG in _tags(c)]
    assert [c.source.splitlines()[-1] for c in checks] == [f'check("{p.id}")' for p in PARTS]


def test_notebook_has_no_outputs_no_solutions_no_absolute_paths():
    text = NOTEBOOK.read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.id
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert str(ROOT) not in text and "/home/" not in text and ":\\\\" not in text


def test_plot_cells_are_skipped_by_grading_and_check_cells_too():
    nb = nbformat.reads(NOTEBOOK.read_text(encoding="utf-8"), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and ("plots." in cell.source or "check(" in cell.source) and cell.id != "setup":
            assert _tags(cell) & {CHECK_TAG, SKIP_TAG}, cell.id
    graded = "\n".join(source for _, source in code_cells(NOTEBOOK))
    assert "check(" not in graded.replace("import check", "") and "plots." not in graded


def _defined(source: str) -> dict:
    namespace = {}
    sys.path.insert(0, str(HOMEWORK.homework_dir))  # provided modules (envs, ...) the parts import
    try:
        exec(compile(source, "<test>", "exec"), namespace)
    finally:
        sys.path.remove(str(HOMEWORK.homework_dir))
    return {k: v for k, v in namespace.items() if isinstance(v, types.FunctionType)}


@pytest.mark.parametrize("part", [p.id for p in PARTS])
def test_code_cells_are_the_stubs(part):
    """Each part's TODO cells define exactly the stub module's functions: same signatures, same docstrings."""
    p = HOMEWORK.part(part)
    stub = make_stub((HOMEWORK.solutions_dir / f"{p.module}.py").read_text(encoding="utf-8"))
    nb = nbformat.reads(NOTEBOOK.read_text(encoding="utf-8"), as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and c.id.startswith(f"{part}-") and not _tags(c)]
    in_notebook, in_module = _defined("\n\n".join(cells)), _defined(stub)
    assert sorted(in_notebook) == sorted(in_module)
    for name, func in in_module.items():
        assert inspect.signature(in_notebook[name]) == inspect.signature(func), name
        assert in_notebook[name].__doc__ == func.__doc__, name


# ---- running it -----------------------------------------------------------------------------------

def test_solved_notebook_runs_and_every_check_passes(solved_run):
    assert not _errors(solved_run)
    checks = [c for c in solved_run.cells if CHECK_TAG in _tags(c)]
    assert len(checks) == len(PARTS)
    for cell in checks:
        out = _stream(cell)
        assert "Все проверки пройдены" in out and "✗" not in out, f"{cell.id}:\n{out}"


def test_solved_notebook_draws_every_plot(solved_run):
    if not _has_matplotlib():
        pytest.skip("matplotlib is not installed (optional extra: plots)")
    plots = [c for c in solved_run.cells if SKIP_TAG in _tags(c)]
    assert plots
    for cell in plots:
        images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
        assert len(images) == 1 and "Не удалось" not in _stream(cell), f"{cell.id}: {_stream(cell)}"


def test_untouched_notebook_runs_to_the_end_with_every_check_failing_cleanly(untouched_run):
    assert not _errors(untouched_run)
    code = [c for c in untouched_run.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "the notebook stopped before its end"
    for cell in (c for c in code if CHECK_TAG in _tags(c)):
        out = _stream(cell)
        assert "не реализовано (TODO)" in out and "Итого самопроверки: 0 из" in out, f"{cell.id}:\n{out}"
        assert "Traceback" not in out and "Все проверки пройдены" not in out, f"{cell.id}:\n{out}"
    for cell in (c for c in code if SKIP_TAG in _tags(c)):
        assert not any("image/png" in o.get("data", {}) for o in cell.outputs), cell.id
        if _has_matplotlib():
            assert "допишете" in _stream(cell), f"{cell.id}: {_stream(cell)}"


# ---- grading a notebook from the command line -------------------------------------------------------

def _graded(tmp_path, notebook, *parts):
    out = tmp_path / "results.json"
    proc = run_check(HW, *parts, "--notebook", str(notebook), "--json", str(out))
    return proc, json.loads(out.read_text(encoding="utf-8"))


def test_command_line_gives_the_solved_notebook_100_percent(solved_path, tmp_path):
    proc, data = _graded(tmp_path, solved_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(100%)" in proc.stdout
    assert all(t["status"] == "passed" for t in data["tests"])


def test_command_line_gives_the_untouched_notebook_0(tmp_path):
    proc, data = _graded(tmp_path, NOTEBOOK)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert data["score"] == 0 and data["tests"]
    assert "не реализовано (TODO)" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr


def test_command_line_skips_magics_and_tagged_cells_reports_broken_cells_and_grades_the_rest(solved_path, tmp_path):
    nb = nbformat.read(str(solved_path), as_version=4)
    setup = next(i for i, c in enumerate(nb.cells) if c.id == "setup")
    shell = nbformat.v4.new_code_cell("!pip install numpy\n%time x = 1\nif False:\n    !echo hi\nfiles = !ls\nnp.mean?")
    shell.outputs = [nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="old", traceback=[])]
    broken = nbformat.v4.new_code_cell("def broken(:\n    pass")
    failing = nbformat.v4.new_code_cell("# эксперимент\nresult = 1 / 0")
    forever = nbformat.v4.new_code_cell("while True:\n    pass")
    forever.metadata["tags"] = [SKIP_TAG]
    for offset, cell in enumerate([shell, broken, failing, forever], start=1):
        nb.cells.insert(setup + offset, cell)
    student = tmp_path / "student.ipynb"
    nbformat.write(nb, str(student))
    proc, data = _graded(tmp_path, student, "ppo")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(100%)" in proc.stdout
    assert f"ячейка {setup + 3} («def broken(:»)" in proc.stdout and "SyntaxError" in proc.stdout
    assert f"ячейка {setup + 4} («# эксперимент»)" in proc.stdout and "ZeroDivisionError" in proc.stdout
    assert f"ячейка {setup + 2} " not in proc.stdout  # shell and magic lines are not errors


def test_command_line_points_at_the_cell_of_a_bug(tmp_path):
    source = (HOMEWORK.solutions_dir / "ppo.py").read_text(encoding="utf-8")
    bug = "def gae(rewards, values, last_value, gamma, lam):\n    x = 1\n    return undefined_name\n"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# ppo"),
                                         nbformat.v4.new_code_cell(source), nbformat.v4.new_code_cell(bug)])
    student = tmp_path / "bug.ipynb"
    nbformat.write(nb, str(student))
    proc, _ = _graded(tmp_path, student, "ppo::test_gae_courier[lam0.5]")
    assert proc.returncode == 1
    assert "ошибка в вашем коде: NameError" in proc.stdout and "ячейка 3" in proc.stdout, proc.stdout


def test_code_cells_turn_shell_and_magic_lines_into_pass(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1\n!ls\nif x:\n    %time y = 2\nz = %pwd\nnp.mean?"),
        nbformat.v4.new_code_cell("%%bash\necho cell magic"),
        nbformat.v4.new_markdown_cell("text"),
    ])
    path = tmp_path / "magic.ipynb"
    nbformat.write(nb, str(path))
    cells = code_cells(path)
    assert [number for number, _ in cells] == [1]
    namespace = {}
    exec(cells[0][1], namespace)
    assert namespace["x"] == 1 and namespace["z"] is None


@pytest.mark.parametrize("version", [3, 4])
def test_code_cells_read_format_4_as_json_and_older_formats_through_nbformat(tmp_path, version):
    """A worker reads format 4 without nbformat (its import would cost each worker 0.13 s of CPU); the cells it
    finds are nbformat's own, tags and line lists included, and a format-3 notebook is still converted."""
    if version == 4:
        nb = nbformat.v4.new_notebook(cells=[
            nbformat.v4.new_code_cell("def f():\n    return 2\n"),
            nbformat.v4.new_code_cell("f()", metadata={"tags": ["skip-grading"]}),
            nbformat.v4.new_markdown_cell("text"),
            nbformat.v4.new_code_cell("y = f() + 1")])
    else:
        v3 = nbformat.v3
        nb = v3.new_notebook(worksheets=[v3.new_worksheet(cells=[
            v3.new_code_cell("def f():\n    return 2\n"), v3.new_text_cell("markdown", "text"),
            v3.new_code_cell("y = f() + 1")])])
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, str(path), version=version)
    assert isinstance(json.loads(path.read_text(encoding="utf-8"))["cells" if version == 4 else "worksheets"], list)
    read = nbformat.read(str(path), as_version=4)
    expected = [(n, c.source.rstrip("\n")) for n, c in enumerate(read.cells, 1)
                if c.cell_type == "code" and "skip-grading" not in c.metadata.get("tags", [])]
    assert code_cells(path) == expected
    assert [n for n, _ in expected] == ([1, 4] if version == 4 else [1, 3])


# ---- the in-notebook check, without a kernel --------------------------------------------------------

def _ppo_namespace(source_edit=None) -> dict:
    source = (HOMEWORK.solutions_dir / "ppo.py").read_text(encoding="utf-8")
    namespace = {"__name__": "__main__"}
    exec(compile(source, "/tmp/ipykernel_0/cell1.py", "exec"), namespace)
    if source_edit:
        exec(compile(source_edit, "/tmp/ipykernel_0/cell2.py", "exec"), namespace)
    return namespace


def _printed(*args, **kwargs) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert check(*args, **kwargs) is None
    return out.getvalue()


def test_check_grades_a_live_namespace_and_keeps_the_global_random_state():
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    out = _printed("ppo", _ppo_namespace())
    assert "Все проверки пройдены" in out and "✗" not in out, out
    assert np.array_equal(np.random.get_state()[1], before)


def test_check_explains_a_failure_in_the_students_function_and_how_to_rerun_it():
    bad = "def gae(rewards, values, last_value, gamma, lam):\n    x = 1\n    return undefined_name\n"
    out = _printed("ppo", _ppo_namespace(bad))
    assert "ошибка в вашем коде: NameError" in out and "в функции gae, строка 3" in out, out
    # the first failure in full, the other checks of gae one line each, every one with its rerun call
    assert 'Повторить: check("ppo::test_gae_courier[lam0.0]")' in out, out
    assert '— check("ppo::test_gae_courier[lam0.5]")' in out, out
    out = _printed("ppo::test_gae_courier[lam0.5]", _ppo_namespace(bad))
    assert "0/1" in out and "только выбранные проверки" in out, out


def test_check_says_which_function_the_notebook_lacks():
    namespace = _ppo_namespace()
    del namespace["gae"]
    out = _printed("ppo", namespace)
    assert "в тетрадке не определено «gae»" in out and "Traceback" not in out, out


def test_check_never_raises_on_a_wrong_part_name():
    out = _printed("no_such_part", _ppo_namespace())
    assert out.startswith("ошибка:") and "ppo" in out


def _plots_module():
    """The homework's plots module as the notebook imports it: the provided copy in homework/<hw>/."""
    name = load_config(HOMEWORK).plots_module
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", HOMEWORK.homework_dir / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_plot_cell_calls_a_function_of_the_plots_module():
    plots = _plots_module()
    config = load_config(HOMEWORK)
    assert config.plots
    for plot in config.plots:
        called = set(re.findall(r"\bplots\.(\w+)\(", plot.code))
        assert called and all(callable(getattr(plots, name, None)) for name in called), plot.code


@pytest.mark.parametrize("toml,says", [
    ('[[plot]]\npart = "no_such_part"\ntext = "t"\ncode = "plots.f()"\n', "no part no_such_part"),
    ('[[plot]]\npart = "ppo"\ntext = "t"\ncode = "plots.f()"\n', "name its module"),
    ('plots = "ppo"\n', "must name a provided module"),
    ('plot = []\nexampel = "ppo::x"\n', "unknown keys"),
    ('[[plot]]\npart = "ppo"\ncode = "plots.f()"\n', "a [[plot]] needs part, text, code"),
    ('repository = "https://x/y.git; rm -rf ~"\n', "repository must be one address"),
])
def test_a_wrong_notebook_toml_is_a_build_error(tmp_path, monkeypatch, toml, says):
    for path in HOMEWORK.solutions_dir.glob("*.py"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "notebook.toml").write_text(toml, encoding="utf-8")
    monkeypatch.setattr(homeworks.Homework, "solutions_dir", property(lambda self: tmp_path))
    monkeypatch.setattr(notebook_build, "ROOT", tmp_path.parent)  # where the error message names the file from
    with pytest.raises(BuildError, match=re.escape(says)):
        load_config(HOMEWORK)


def test_the_colab_cell_clones_the_repository_the_notebook_toml_names(monkeypatch):
    config = load_config(HOMEWORK)
    assert config.repository is None  # the kit's own: the student fills the placeholder in
    named = dataclasses.replace(config, repository="https://example.org/course/rl-homework.git")
    monkeypatch.setattr(notebook_build, "load_config", lambda hw: named)
    text = "".join(c.source for c in notebook_build.build_notebook(HOMEWORK).cells if c.cell_type == "markdown")
    assert "!git clone https://example.org/course/rl-homework.git rl-homework" in text
    assert notebook_build.REPOSITORY_PLACEHOLDER not in text


def test_plots_without_matplotlib_say_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _plots_module().gae_courier(lambda **kwargs: (_ for _ in ()).throw(AssertionError("must not be called")))
    assert "pip install matplotlib" in out.getvalue()
