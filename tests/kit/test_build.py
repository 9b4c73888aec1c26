"""The student's files are generated from the solutions and are up to date."""
import pytest

from grader.authoring.build import stale
from grader.authoring.stubs import BuildError, make_stub, solved_source
from grader.base import homeworks
from grader.base.homeworks import ROOT


@pytest.mark.parametrize("name", homeworks.available())
def test_generated_files_are_up_to_date(name):
    out_of_date = [str(p.relative_to(ROOT)) for p in stale(name)]
    assert not out_of_date, f"run `python -m grader.authoring.build {name}`; out of date: {out_of_date}"


def test_stub_keeps_signature_and_docstring_and_raises():
    source = (
        'def f(x, y=1):\n'
        '    """Док."""\n'
        '    # BEGIN SOLUTION\n'
        '    return x + y\n'
        '    # END SOLUTION\n'
    )
    stub = make_stub(source)
    assert 'def f(x, y=1):\n    """Док."""\n    # TODO: ваш код\n    raise NotImplementedError("TODO: f")\n' == stub
    namespace = {}
    exec(stub, namespace)
    with pytest.raises(NotImplementedError):
        namespace["f"](1)


def test_solved_source_keeps_the_code_and_drops_the_markers():
    source = "def f(x):\n    # BEGIN SOLUTION\n    return x\n    # END SOLUTION\n"
    assert solved_source(source) == "def f(x):\n    return x\n"


def test_top_level_region_is_removed():
    stub = make_stub("import numpy\n\n\n# BEGIN SOLUTION\ndef _helper():\n    return 1\n# END SOLUTION\n\n\n"
                     "def g():\n    pass\n")
    assert "_helper" not in stub and "def g():" in stub


@pytest.mark.parametrize("source", [
    "def f():\n    # BEGIN SOLUTION\n    pass\n",
    "def f():\n    # END SOLUTION\n",
    "def f():\n    # BEGIN SOLUTION\n    # BEGIN SOLUTION\n    # END SOLUTION\n",
])
def test_unbalanced_regions_are_errors(source):
    with pytest.raises(BuildError):
        make_stub(source)


def test_no_solution_code_leaks_into_stubs():
    for name in homeworks.available():
        hw = homeworks.load(name)
        for path in hw.homework_dir.glob("*.py"):
            assert "BEGIN SOLUTION" not in path.read_text(encoding="utf-8"), path
