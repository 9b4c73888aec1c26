"""The answer key: what a check compares the student's answer with, and what names a typical mistake.

The code that computes an expected answer (an oracle, the replay of a typical mistake, a value a hint needs) lives
in the instructor's modules ``tests/<hw>/key/<part>.py``, which the student's copy does not hold
(grader.authoring.release) and a worker never sees (grader.boundary.zygote). A check reaches them through
``key = answer_key("ppo")`` and ``key.gae_explicit_sum(delta, gamma, lam)``:

- on the public inputs (the ones the student's copy holds) the answer comes from the records
  ``tests/<hw>/answers/<part>.json``, which ``python -m grader.grading.public_answers`` writes by running the reference
  with the instructor's modules; in the copy and in the instructor's checkout alike, so the copy's verdicts and feedback
  are the instructor's on those inputs;
- on hidden inputs (grader.grading.hidden) the answers recorded once for the instructor's secret
  (grader.grading.hidden_answers), and the instructor's module for what no grade of the reference asked (the student's
  own run) or a typical mistake's answer a failed check wants.

A record is found by the function's name and the inputs it was called with, compared with a tolerance (the
inputs come from the checks' own seeds; a record made with other inputs, say by another NumPy's generator, is
no record of these). Every key call of a check is made whatever the student's answer, from the check's inputs
alone, never from the student's answer: then running the reference records every value any submission can
need. A call with no record is the kit's error (:class:`MissingAnswer`), never a pass.
"""
from __future__ import annotations

import copy
import importlib.util
import json
import math
import sys
import time
import types
from collections.abc import Mapping
from pathlib import Path

import numpy as np

# the check now running (grader.grading.plugin sets it); "" while a module loads
CURRENT = {"test": "", "hidden": False}
RECORDING: dict | None = None  # part -> entries, while python -m grader.grading.public_answers runs the reference
# the file the checking process writes RECORDING to (python -m grader.grading.public_answers)
RECORD_ENV = "HWKIT_RECORD"
HIDDEN_ONLY = {"on": False}  # record only the calls of checks on hidden inputs (python -m grader.grading.secret)
MISSING = "ошибка набора проверок: нет записанного ответа"  # starts every MissingAnswer's message
RTOL, ATOL = 1e-9, 1e-12  # how close recorded inputs must be to these (floating-point noise of another machine)
SMALL = 48  # arrays up to this size are recorded whole; larger ones by a few sums


class MissingAnswer(Exception):
    """No recorded answer for a key call on public inputs: the records are stale or the check makes a key call that
    depends on the student's answer (never a pass, never a verdict about the student)."""


def answer_key(part: str) -> "AnswerKey":
    """The answer key of ``part`` for the test file calling this (``tests/<hw>/test_<part>.py``)."""
    return AnswerKey(Path(sys._getframe(1).f_globals["__file__"]).resolve().parent, part)


def key_dir(tests_dir: Path) -> Path:
    return Path(tests_dir) / "key"


def keyed_parts(hw) -> list:
    """The parts of a homework whose checks use an answer key (the instructor's module
    ``tests/<hw>/key/<module>.py``)."""
    return [p for p in hw.parts if (key_dir(hw.tests_dir) / f"{p.module}.py").is_file()]


def answers_path(tests_dir: Path, part: str) -> Path:
    return Path(tests_dir) / "answers" / f"{part}.json"


class AnswerKey:
    def __init__(self, tests_dir: Path, part: str):
        self._tests_dir, self._part = Path(tests_dir), part
        self._module = None
        self._records: list | None = None

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._call(name, args, kwargs)

    @property
    def later(self) -> "_Later":
        """``key.later.f(...)``: a mapping wanted only when the answer is wrong (the typical mistakes' answers). On
        public inputs it is read from the records as any key call; on hidden ones it is computed when first used,
        from copies of the inputs as they are now (a failing check uses it; a passing one never pays for it)."""
        return _Later(self)

    def _call(self, name: str, args: tuple, kwargs: dict):
        if CURRENT["hidden"]:
            return self._hidden(name, args, kwargs)
        if RECORDING is not None and not HIDDEN_ONLY["on"]:
            value = getattr(self._instructor(), name)(*args, **kwargs)
            RECORDING.setdefault(self._part, []).append(
                {"function": name, "test": CURRENT["test"], "inputs": fingerprint([list(args), kwargs]),
                 "answer": encode(value)})
            return value
        return self._recorded(name, fingerprint([list(args), kwargs]))

    def _hidden(self, name: str, args: tuple, kwargs: dict):
        """A key call of a check on hidden inputs: recorded on public inputs (a check on hidden inputs may still ask
        about public ones), else recorded for the secret in force (grader.grading.hidden_answers), else computed: inputs
        no grade of the reference made (the student's own run) or inputs that are no data (a module of the student's).
        While ``python -m grader.grading.secret`` records, every call it computes is recorded, with the CPU it took."""
        module = self._instructor()
        if name in getattr(module, "FROM_THE_RUN", ()):
            # inputs from the student's own run (its episodes, its transitions): no grade of the reference made them,
            # so no record holds them; computed at once, never fingerprinted or recorded
            return getattr(module, name)(*args, **kwargs)
        try:
            inputs = fingerprint([list(args), kwargs])
        except (RecursionError, TypeError, ValueError):
            inputs = None
        if inputs is not None:
            found = self._find(name, inputs)
            if found is None and RECORDING is None:
                found = self._find_hidden(name, inputs)
            if found is not None:
                return decode(found["answer"])
        started = time.process_time()
        value = getattr(module, name)(*args, **kwargs)
        if RECORDING is not None and inputs is not None:
            RECORDING.setdefault(self._part, []).append(
                {"function": name, "test": CURRENT["test"], "inputs": inputs, "answer": encode(value), "hidden": True,
                 "cpu": time.process_time() - started})
        return value

    def _find_hidden(self, name: str, inputs) -> dict | None:
        from grader.grading import hidden_answers

        try:
            recorded = hidden_answers.entries(self._tests_dir, self._part)
        except LookupError as exc:
            raise MissingAnswer(f"{MISSING} на скрытых входах: {exc}; преподавателю: "
                                + hidden_answers.RECORD_COMMAND.format(hw=self._tests_dir.name)) from None
        return matching(recorded.get(name, []), inputs)

    def _instructor(self):
        """The instructor's module of this part (loaded by path: it is no package the worker could import)."""
        if self._module is None:
            path = key_dir(self._tests_dir) / f"{self._part}.py"
            if not path.is_file():
                raise MissingAnswer(f"{MISSING}: скрытые входы проверяются только в копии преподавателя "
                                    f"(нет {path.name} в tests/{self._tests_dir.name}/key/)")
            spec = importlib.util.spec_from_file_location(f"_hwkit_key_{self._tests_dir.name}_{self._part}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self._module = module
        return self._module

    def _find(self, name: str, inputs) -> dict | None:
        if self._records is None:
            self._records = load(answers_path(self._tests_dir, self._part))
        return matching([e for e in self._records if e["function"] == name], inputs)

    def _recorded(self, name: str, inputs):
        found = self._find(name, inputs)
        if found is not None:
            return decode(found["answer"])
        raise MissingAnswer(f"{MISSING} {name} на этих входах в tests/{self._tests_dir.name}/answers/"
                            f"{self._part}.json (проверка «{CURRENT['test']}»). Обновите копию набора; "
                            "преподавателю: python -m grader.grading.public_answers")


class _Later:
    def __init__(self, answer_key: AnswerKey):
        self._key = answer_key

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            if not CURRENT["hidden"]:
                return self._key._call(name, args, kwargs)
            args, kwargs = copy.deepcopy((args, kwargs))
            return Later(lambda: self._key._call(name, args, kwargs))
        return call


class Later(Mapping):
    """A mapping computed when first used (:attr:`AnswerKey.later`)."""

    def __init__(self, make):
        self._make, self._value = make, None

    def _get(self) -> Mapping:
        if self._value is None:
            self._value = self._make()
        return self._value

    def __getitem__(self, name):
        return self._get()[name]

    def __iter__(self):
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


def matching(entries: list[dict], inputs) -> dict | None:
    """The first of ``entries`` recorded for these inputs: those the running check recorded tried first (a grade
    asks the key what the reference's grade asked, check by check, so most calls find theirs there at once)."""
    test = CURRENT["test"]
    for e in sorted(entries, key=lambda e: e.get("test") != test):  # stable: the check's own first, in their order
        if same(e["inputs"], inputs):
            return e
    return None


def load(path: Path) -> list:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))["entries"]
    except (OSError, ValueError, KeyError, TypeError):
        return []


# ---- inputs as a fingerprint, answers as JSON -----------------------------------------------------------


def fingerprint(value, depth: int = 0):
    """The inputs of a key call as JSON data that another machine's inputs match within a tolerance: numbers and
    small arrays whole, a large array by its shape and a few sums, an object by its class and attributes."""
    if depth > 24:
        raise ValueError("inputs nested too deep to be data")
    depth += 1
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _float(value)
    if isinstance(value, np.ndarray) or (isinstance(value, (list, tuple)) and value
                                         and all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                                                 for v in value)):
        a = np.asarray(value)
        if a.dtype == object:
            return [fingerprint(v, depth) for v in a.tolist()]
        if a.dtype.kind not in "biuf":
            return {"array": str(a.dtype), "data": a.tolist()}
        flat = a.astype(float).ravel()
        if flat.size <= SMALL:
            return {"shape": list(a.shape), "data": [_float(x) for x in flat]}
        finite = np.where(np.isfinite(flat), flat, 0.0)
        weights = 1.0 + (np.arange(flat.size) % 7)
        return {"shape": list(a.shape), "sums": [_float(finite.sum()), _float((finite ** 2).sum()),
                                                 _float((weights * finite).sum()), int(np.isfinite(flat).sum())]}
    if isinstance(value, (list, tuple)):
        return [fingerprint(v, depth) for v in value]
    if isinstance(value, dict):
        return {"dict": [[fingerprint(k, depth), fingerprint(v, depth)] for k, v in value.items()]}
    if isinstance(value, types.ModuleType) or hasattr(type(value), "__getattr__"):
        raise TypeError("a module (the student's, or a proxy of it) is no input to record")
    if callable(value) and hasattr(value, "__qualname__"):
        return {"callable": value.__qualname__}
    if hasattr(value, "__dict__"):
        return {"object": type(value).__qualname__, "attributes": fingerprint(
            {k: v for k, v in sorted(vars(value).items()) if not k.startswith("_")}, depth)}
    return {"repr": repr(value)}


def _float(x) -> float | str:
    x = float(x)
    return x if math.isfinite(x) else repr(x)


def same(a, b) -> bool:
    """Whether two fingerprints stand for the same inputs (numbers within :data:`RTOL`/:data:`ATOL`)."""
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)
                and not isinstance(b, bool) and math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL))
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        for x, y in zip(a, b):  # two floats (most of a fingerprint) compared here, without a call
            if type(x) is float and type(y) is float:
                if not math.isclose(x, y, rel_tol=RTOL, abs_tol=ATOL):
                    return False
            elif not same(x, y):
                return False
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def encode(value):
    """An answer as JSON data that :func:`decode` turns back into the same value (floats exactly)."""
    if value is None or isinstance(value, (bool, str, int)) and not isinstance(value, np.generic):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, np.generic):
        return {"scalar": value.dtype.str, "value": encode(value.item())}
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise TypeError("an answer key returns no array of objects")
        return {"ndarray": value.dtype.str, "shape": list(value.shape),
                "data": [encode(v) for v in value.ravel().tolist()]}
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(f"an answer key returns data (numbers, strings, arrays, tuples, lists, dicts), not "
                    f"{type(value).__name__}")


def decode(data):
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "float" in data:
        return float(data["float"])
    if "scalar" in data:
        return np.dtype(data["scalar"]).type(decode(data["value"]))
    if "ndarray" in data:
        dtype = np.dtype(data["ndarray"])
        return np.array([decode(v) if isinstance(v, (list, dict)) else v for v in data["data"]],
                        dtype=dtype).reshape(data["shape"])
    if "tuple" in data:
        return tuple(decode(v) for v in data["tuple"])
    if "dict" in data:
        return {_hashable(decode(k)): decode(v) for k, v in data["dict"]}
    raise ValueError(f"not an encoded answer: {sorted(data)}")


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key
