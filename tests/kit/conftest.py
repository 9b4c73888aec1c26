import compileall
import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/kit/kit.py, catalogue.py

from catalogue import Graded  # noqa: E402
from grader.base.homeworks import ROOT  # noqa: E402
from grader.boundary import confine as _confine  # noqa: E402

# the bytecode of the kit's own modules (the grader, the graded suites, their answer keys, these tests), written
# once here into their __pycache__ folders (ignored by git, never part of a release): the grader gives each process
# it starts PYTHONDONTWRITEBYTECODE=1 (nothing lands in a student's folder), as does the environment of machines
# like CI's, so without it each of the suite's hundreds of processes would compile the grader and the checks again
# (about 0.15 s of CPU a grading); they read it, and write none
for _folder in ("grader", "tests"):  # not the mistakes and variants, appended to copies of the reference
    compileall.compile_dir(str(ROOT / _folder), quiet=1, rx=re.compile(r"[/\\](mutants|variants|second_homework)[/\\]"))

# the kit's own tests grade batches and build Gradescope zips with the kit's default secret of hidden inputs (an
# instructor is refused it: tests/kit/test_hidden.py)
os.environ["HWKIT_ALLOW_DEFAULT_SECRET"] = "1"
# where nothing confines a submission's code (no namespaces, not root), they grade batches all the same; where
# something does, a batch is refused without it (tests/kit/test_confinement.py)
if _confine.mode() == "none":
    os.environ[_confine.ALLOW_ENV] = "1"

# a second homework's files, laid over a copy of the kit by test_second_homework.py: not the kit's own tests
collect_ignore = ["second_homework"]


@pytest.fixture(scope="session")
def graded_catalogue(request, tmp_path_factory):
    """Every mutant that a selected test asks about, graded once (see catalogue.py); a ``whole_path`` is graded on
    every check of its part too; the ``path`` of a test that asks for ``graded_every`` also for the record on every
    check it can change."""
    paths, whole, every = [], [], []
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "graded_catalogue" in getattr(item, "fixturenames", ()):
            paths += [params[k] for k in ("path", "whole_path") if k in params]
            whole += [params["whole_path"]] if "whole_path" in params else []
            every += [params["path"]] if "path" in params and "graded_every" in item.fixturenames else []
    graded = Graded(paths, tmp_path_factory, whole, every)
    yield graded
    graded.close()


@pytest.fixture
def graded_every(graded_catalogue):
    """``graded_every(path)``: (the part's result, the scoreboard) of the mutant graded for the record (public and
    hidden inputs) on every check whose verdict it can change, past the first block."""
    return graded_catalogue.every


def pytest_collection_modifyitems(session, config, items):
    """The attacks on the answer key last: their gradings run in the background from the start (below)."""
    items.sort(key=lambda item: item.path.name == "test_answer_key.py")  # a stable sort: the rest keep their order


def pytest_collection_finish(session):
    """Start the gradings of the attacks on the answer key (tests/kit/test_answer_key.py) that selected tests use."""
    mine = [item for item in session.items if item.path.name == "test_answer_key.py"]
    wanted = {name for item in mine for name in ("paste", "lookup") if name in item.fixturenames}
    if wanted and not session.config.option.collectonly:
        # session.config._tmp_path_factory: what the tmp_path_factory fixture gives
        mine[0].module.attacks(session.config._tmp_path_factory, wanted)
