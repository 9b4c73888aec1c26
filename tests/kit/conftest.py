import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/kit/kit.py, catalogue.py

from catalogue import Graded  # noqa: E402


@pytest.fixture(scope="session")
def graded_catalogue(request, tmp_path_factory):
    """Every mutant that a selected test asks about, graded once on its whole part (see catalogue.py)."""
    paths = []
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "graded_catalogue" in getattr(item, "fixturenames", ()) and "path" in params:
            paths.append(params["path"])
    graded = Graded(paths, tmp_path_factory)
    yield graded
    graded.close()
