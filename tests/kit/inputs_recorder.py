"""A pytest plugin for the kit's own tests: the checking process notes every input it sends to the student's code.

Loaded into a grading's checking process by ``PYTEST_PLUGINS=inputs_recorder`` (with this folder on PYTHONPATH: the
grader passes both on, tests/kit/test_hidden_shown.py sets them); nothing of the grader loads it otherwise. Each call
the checking process makes of a student's function (grader.boundary.session.Session.call) appends one JSON line to
the file ``HWKIT_TEST_INPUTS_LOG`` names: whether the check now running is on hidden inputs
(``grader.grading.key.CURRENT``,
which the grader's plugin sets from the check's marks) and every number of the call's arguments (arrays whole, the
state of a generator, the attributes of an environment).
"""
from __future__ import annotations

import json
import math
import os

import numpy as np

from grader.boundary import session
from grader.grading import key

LOG = os.environ.get("HWKIT_TEST_INPUTS_LOG", "")
_LIMIT = 200_000  # numbers of one call at most


def elements(value, out: list[float], depth: int = 0) -> list[float]:
    """The numbers of ``value``: its elements, recursively (ints as floats; booleans, NaN and ±inf left out)."""
    if depth > 8 or len(out) > _LIMIT or value is None or isinstance(value, (bool, np.bool_, str, bytes)):
        return out
    if isinstance(value, (int, float, np.integer, np.floating)):
        try:
            number = float(value)
        except OverflowError:
            return out
        if math.isfinite(number):
            out.append(number)
    elif isinstance(value, np.ndarray):
        if value.dtype.kind in "iuf":
            out.extend(x for x in value.astype(float).ravel().tolist() if math.isfinite(x))
        elif value.dtype.kind == "O":
            for item in value.ravel().tolist():
                elements(item, out, depth + 1)
    elif isinstance(value, (list, tuple, set)):
        for item in value:
            elements(item, out, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            elements(item, out, depth + 1)
    elif isinstance(value, np.random.Generator):
        elements(value.bit_generator.state, out, depth + 1)
    elif hasattr(value, "__dict__"):
        elements(vars(value), out, depth + 1)
    return out


_call = session.Session.call


def _recorded(self, module, function, args, kwargs, repeat=0, track=True):
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps({"hidden": bool(key.CURRENT.get("hidden")), "function": function,
                                "values": elements([list(args), kwargs], [])}) + "\n")
    return _call(self, module, function, args, kwargs, repeat, track)


session.Session.call = _recorded
