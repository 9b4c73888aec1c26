import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/kit/kit.py, catalogue.py

from catalogue import Graded  # noqa: E402

# the kit's own tests grade batches and build Gradescope zips with the kit's default secret of hidden inputs (an
# instructor is refused it: tests/kit/test_hidden.py)
os.environ["HWKIT_ALLOW_DEFAULT_SECRET"] = "1"

# a second homework's files, laid over a copy of the kit by test_second_homework.py: not the kit's own tests
collect_ignore = ["second_homework"]


@pytest.fixture(scope="session")
def graded_catalogue(request, tmp_path_factory):
    """Every mutant that a selected test asks about, graded once (see catalogue.py); a ``whole_path`` is graded on
    every check of its part too."""
    paths, whole = [], []
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "graded_catalogue" in getattr(item, "fixturenames", ()):
            paths += [params[k] for k in ("path", "whole_path") if k in params]
            whole += [params["whole_path"]] if "whole_path" in params else []
    graded = Graded(paths, tmp_path_factory, whole)
    yield graded
    graded.close()
