"""Assertion helpers for graded tests: each failure explains itself in Russian.

A graded test calls these instead of bare ``assert``; a failure raises :class:`CheckFailure`
whose text the grader shows the student as it is: what was checked, expected vs got (rounded,
with shapes), and a hint. ``mistakes`` maps the name of a typical mistake to the value that
mistake produces; when the student's answer matches one, the message names it. A named mistake also travels
as a field of the failure (``CheckFailure.diagnosis``), set here, on the checking side: whatever reads which
mistake a check named (the scoreboard, the gate of hidden inputs, the exports, the class report) reads that field,
never the text, which may quote the student's own words.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Mapping

import numpy as np

from grader.base.call_summary import PROBING
from grader.base.escape import one_line
from grader.base.results import DIAGNOSIS  # the words that name a typical mistake


class CheckFailure(AssertionError):
    """A graded check failed; the message is meant for the student. ``function``: the function whose answer
    failed (set by :func:`about`), in a check of several functions. ``defer``: its hint sends the student to
    other checks first (:class:`Defer`)."""

    function: str | None = None
    defer: dict | None = None
    differs: tuple[tuple[int, ...], int] | None = None  # an array answer's shape and the flat index of its first
    # differing item: -v shows the answer around it (grader.base.call_summary.value)
    diagnosis: str = ""  # the line that names a typical mistake («Похоже на типичную ошибку: …»), as printed


class Mistake(str):
    """A hint that names a typical mistake: ``hint=Mistake("шаг без α.")`` is printed as «Похоже на типичную ошибку:
    шаг без α.» in place of «Подсказка: …», and the failure carries that line as its diagnosis."""


class Defer(str):
    """A hint that sends the student to other checks first: ``Defer("сначала исправьте проверку «…» выше: …",
    "test_fork")``. The report shows it only when one of ``checks`` (test names, with or without their
    ``[parameters]``, or a function: its checks) failed too and is shown above, with the command that reruns it;
    otherwise the hint is left out (grader.base.told). A hint about a function the student's one may call
    is given only when it did (:func:`went_through`)."""

    def __new__(cls, text: str, *checks: str):
        hint = super().__new__(cls, text)
        hint.checks = tuple(checks)
        return hint


def graded(title: str, *, subject: str | tuple[str, ...], weight: float = 1.0, bonus: bool = False,
           guard: bool = False, oracle: bool = False, replays: tuple[str, ...] = (), gate: str | None = None):
    """Mark a test as a graded check of ``subject``: the function whose answer it compares (the one the feedback
    puts a failure under, whatever else the check calls to build its expected answer or a hint), or the functions
    of a check that compares several (then :func:`about` says which one failed, else the first is meant).
    ``title`` and ``subject`` may use the test's parameters: ``"курьер, λ = {lam}"``, ``"{method}"``.
    ``guard``: a check that code doing nothing could pass (a ValueError on bad input, the same answer for the same
    seed); it counts only when a check of the same function's behaviour passes too (grader.grading.runner).

    In the grade for the record every check counts only when each of its gates is open (grader.grading.runner.gated); a
    gate is a function (the check's subjects), or ``gate``: one behaviour of a function that works on its own
    (train's GRPO, ``algo='grpo'``). A gate opens when one of its ``oracle`` checks passes on hidden inputs (its
    hidden twin, or the check itself run only in the grade): a check whose expected value the answer key computes
    from the check's own copy of the inputs, exactly or as a distribution judged by frequencies. Properties,
    bookkeeping, statistics and comparisons of the function with itself open nothing. ``replays``: the student's
    own functions the key composes to make the expected value (train replayed from its pieces); such a check counts,
    and opens its gate, only when every one of those pieces' gates is open."""
    import pytest  # here, not at the top: a worker imports this module for the test environments, never pytest

    subjects = (subject,) if isinstance(subject, str) else tuple(subject)
    return pytest.mark.check(title, subject=subjects, weight=weight, bonus=bonus, guard=guard, oracle=oracle,
                             replays=tuple(replays), gate=gate)


class about:
    """``with about("policy_evaluation"): check_close(...)``: in a check of several functions, a failure inside
    the block is about that function."""

    def __init__(self, function: str):
        self.function = function

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if isinstance(exc, CheckFailure) and exc.function is None:
            exc.function = self.function
        return False


def went_through(module, caller: str, callee: str) -> bool:
    """Whether, in this check, the student's ``caller`` went through their own ``callee`` (grader.boundary.tracing):
    only then can a mistake of ``callee`` explain a wrong answer of ``caller``. True where it is not known (no call
    of ``caller`` traced)."""
    entered = getattr(type(module), "entered", None) and module.entered()
    if not entered or caller not in entered:
        return True
    return callee in entered[caller]


def call_many(function, n: int, *args, **kwargs) -> list:
    """``[function(*args, **kwargs) for _ in range(n)]``; for a student's function, in its worker as one request
    (a check that draws an ε-greedy action 20 000 times pays the trip between processes once)."""
    many = getattr(function, "repeat", None)
    if many is not None:
        return many(n, *args, **kwargs)
    return [function(*args, **kwargs) for _ in range(n)]


def call_once(function, *args, **kwargs):
    """``function(*args, **kwargs)`` on arguments made for this call only, which the check never looks at again (a
    fresh environment for a 500-episode run): for a student's function, what the call did to them is not sent
    back from its worker (no journal of the environment's steps to record, send and replay)."""
    once = getattr(function, "untracked", None)
    return once(*args, **kwargs) if once is not None else function(*args, **kwargs)


def attempt(default, f, *args, **kwargs):
    """A probe's call of the student's code (a check looking for the cause of a failure it already found):
    whatever it raises only means «not right here» (the check's own call reports errors), never a new failure."""
    PROBING[0] += 1
    try:
        return f(*args, **kwargs)
    except Exception:  # noqa: BLE001 - see the docstring
        return default
    finally:
        PROBING[0] -= 1


def probe(default):
    """Decorate a probe: an exception in the student's code it calls gives ``default``."""
    def wrap(f):
        @functools.wraps(f)
        def guarded(*args, **kwargs):
            return attempt(default, f, *args, **kwargs)
        return guarded
    return wrap


def matches(got: Any, expected: Any, atol: float = 1e-6) -> bool:
    """Whether an answer equals the expected one (any shape or type mismatch: no), for a probe."""
    try:
        got = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return False
    expected = np.asarray(expected, dtype=float)
    return got.shape == expected.shape and bool(np.allclose(got, expected, atol=atol, rtol=atol))


def fmt(x: Any, digits: int = 4) -> str:
    """A short, rounded rendering of a number or an array, with its shape."""
    if x is None:
        return "None"
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, float, np.integer, np.floating)):
        return _num(float(x), digits)
    try:
        arr = np.asarray(x)
    except Exception:  # noqa: BLE001 - whatever it is, show its type
        return f"{type(x).__name__}"
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        return f"{type(x).__name__} {one_line(x, 80)}"
    if arr.ndim == 0:
        return _num(float(arr), digits)
    if arr.ndim > 2 and arr.size > _THRESHOLD:  # a wall of numbers says less than its shape and range
        finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr.ravel()
        span = f"значения от {_num(float(finite.min()), digits)} до {_num(float(finite.max()), digits)}" \
            if finite.size else "ни одного конечного значения"
        return f"массив {arr.dtype} формы {tuple(arr.shape)}: {span}"
    text = np.array2string(np.round(arr.astype(float), digits), precision=digits, suppress_small=True,
                           separator=", ", threshold=_THRESHOLD, edgeitems=_edge(arr.ndim), max_line_width=100)
    text = "\n".join(line for line in text.splitlines() if line.strip())  # no blank lines between 3-D slices
    return f"{text} (форма {tuple(arr.shape)})"


def shown(expected: Any, got: Any) -> tuple[str, str]:
    """``fmt`` of both with as many digits as it takes for a difference to show (4 at least, 15 at most): a
    reported mismatch never reads «ожидали 1.0, получили 1.0»."""
    for digits in (4, 6, 8, 10, 12, 15):
        pair = fmt(expected, digits), fmt(got, digits)
        if pair[0] != pair[1]:
            break
    return pair


# fmt shows an array of more than _THRESHOLD numbers as the _edge(ndim) first and last items of each axis (a table, as
# its first and last rows: a failure block stays within about 20 lines), one of more than 2 axes as its shape and range
_THRESHOLD = 24


def _edge(ndim: int) -> int:
    return 4 if ndim == 1 else 2


def _elided(shape: tuple[int, ...], index: tuple[int, ...]) -> bool:
    """Whether fmt hides the item at ``index`` of an array of this shape (behind «...», or in a summary)."""
    if int(np.prod(shape)) <= _THRESHOLD:
        return False
    if len(shape) > 2:
        return True
    edge = _edge(len(shape))
    return any(n > 2 * edge and edge <= i < n - edge for n, i in zip(shape, index))


def _window(expected: np.ndarray, got: np.ndarray, index: tuple[int, ...], differs: np.ndarray, digits: int = 4,
            half: int = 3) -> str:
    """Expected and got side by side around ``index`` along the last axis, the differing positions marked."""
    row, j = index[:-1], index[-1]
    lo, hi = max(0, j - half), min(expected.shape[-1], j + half + 1)
    cols = list(range(lo, hi))
    exp = [_num(float(expected[row + (c,)]), digits) for c in cols]
    out = [_num(float(got[row + (c,)]), digits) for c in cols]
    heads = [str(c) for c in cols]
    width = max(len(x) for x in exp + out + heads)
    marks = ["^" * width if differs[row + (c,)] else "" for c in cols]
    label = max(len("позиция"), len("получили"))
    span = f"строка {row[0] if len(row) == 1 else row}, столбцы {lo}–{hi - 1}; " if row else ""
    lines = [f"Вокруг позиции {index if row else j} ({span}в записи выше она скрыта за «...»; ^ — где ответы "
             "расходятся):"]
    for name, values in (("позиция", heads), ("ожидали", exp), ("получили", out), ("", marks)):
        lines.append(f"  {name:<{label}}  " + " ".join(f"{v:>{width}}" for v in values).rstrip())
    return "\n".join(line.rstrip() for line in lines)


def _num(v: float, digits: int) -> str:
    if math.isnan(v) or math.isinf(v):
        return str(v)
    r = round(v, digits)
    return f"{r:.{digits}f}".rstrip("0").rstrip(".") if r != 0 else "0"


def _fail(what: str, expected: str | None, got: str | None, hint: str = "", extra: str = "",
          mistake: str = "") -> None:
    """Raise the failure; ``mistake``: the words that name a typical mistake the answer matches (printed after
    «Похоже на типичную ошибку: », and carried as the failure's diagnosis), as does a ``Mistake`` hint."""
    lines = [f"Проверяли: {what}"]
    if expected is not None:
        lines.append(f"Ожидали:   {expected}")
    if got is not None:
        lines.append(f"Получили:  {got}")
    if extra:
        lines.append(extra)
    named = [f"{DIAGNOSIS}: {mistake}"] if mistake else []
    lines += named
    if hint:  # a hint that names a typical mistake is that mistake's diagnosis, on a line of its own
        said = f"{DIAGNOSIS}: {hint}" if isinstance(hint, Mistake) else f"Подсказка: {hint}"
        named += [said] if isinstance(hint, Mistake) else []
        lines.append(said)
    failure = CheckFailure("\n".join(lines))
    failure.diagnosis = named[0] if named else ""  # the first printed, when a hint names one too
    if isinstance(hint, Defer):
        failure.defer = {"checks": list(hint.checks), "text": str(hint)}
    raise failure


def _not_implemented_if_none(got: Any, what: str) -> None:
    if got is None:
        _fail(what, None, "None", "функция ничего не вернула — похоже, она ещё не дописана "
              "(нет return или осталось `...`).")


def as_array(got: Any, what: str, *, ndim: int | None = None) -> np.ndarray:
    """Convert an answer to a float array, or fail with a message that says what was expected."""
    _not_implemented_if_none(got, what)
    if isinstance(got, tuple) and ndim != 0:
        _fail(what, "массив чисел", f"кортеж из {len(got)} элементов",
              "функция должна вернуть один массив, а не кортеж.")
    try:
        arr = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        _fail(what, "массив чисел", f"{type(got).__name__}: {one_line(got, 80)}")
    if ndim is not None and arr.ndim != ndim:
        _fail(what, f"массив размерности {ndim}", fmt(arr))
    return arr


def _match_mistake(got: np.ndarray, mistakes: Mapping[str, Any] | None, atol: float, rtol: float) -> str:
    """The words naming the typical mistake (for ``_fail``'s ``mistake``), when exactly one gives this answer: where
    two do, naming either could send the student the wrong way, so none is named."""
    matched = []
    for name, value in (mistakes or {}).items():
        try:
            value = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            continue
        if value.shape == got.shape and np.allclose(got, value, atol=atol, rtol=rtol):
            matched.append(name)
    return f"{matched[0]}." if len(matched) == 1 else ""


def check_close(got: Any, expected: Any, *, what: str, hint: str = "", atol: float = 1e-6, rtol: float = 1e-6,
                mistakes: Mapping[str, Any] | None = None) -> np.ndarray:
    """``got`` must equal ``expected`` elementwise within tolerance, with the same shape."""
    expected = np.asarray(expected, dtype=float)
    arr = as_array(got, what)
    if arr.shape != expected.shape:
        _fail(what, fmt(expected), fmt(arr), hint or "проверьте форму ответа: он должен совпадать по форме с входами.")
    if not np.all(np.isfinite(arr)) and np.all(np.isfinite(expected)):
        nan = "в ответе есть NaN или бесконечность: проверьте деление и exp/log."
        _fail(what, fmt(expected), fmt(arr), hint or nan, extra="В ответе есть NaN или бесконечность." if hint else "")
    if not np.allclose(arr, expected, atol=atol, rtol=rtol):
        bad = np.argwhere(~np.isclose(arr, expected, atol=atol, rtol=rtol))
        where, differs = "", None
        if arr.ndim >= 1 and len(bad):
            i = tuple(int(j) for j in bad[0])
            e, g = shown(expected[i], arr[i])
            where = f"Первое расхождение в позиции {i if len(i) > 1 else i[0]}: ожидали {e}, получили {g}."
            if _elided(arr.shape, i):
                where += "\n" + _window(expected, arr, i, ~np.isclose(arr, expected, atol=atol, rtol=rtol))
            differs = (tuple(arr.shape), int(np.ravel_multi_index(i, arr.shape)))
        try:
            _fail(what, *shown(expected, arr), hint, extra=where, mistake=_match_mistake(arr, mistakes, atol, rtol))
        except CheckFailure as failure:
            failure.differs = differs
            raise
    return arr


def check_float(got: Any, expected: float, *, what: str, hint: str = "", atol: float = 1e-6, rtol: float = 1e-6,
                mistakes: Mapping[str, Any] | None = None) -> float:
    """``got`` must be one number (a Python or NumPy scalar, not an array) close to ``expected``."""
    _not_implemented_if_none(got, what)
    if isinstance(got, (list, tuple)) or (isinstance(got, np.ndarray) and got.ndim > 0):
        _fail(what, f"одно число {fmt(expected)}", fmt(got), "функция должна вернуть одно число (float), а вернула "
              "массив: сведите результат к числу, как сказано в docstring (например, mean по батчу).",
              mistake=_match_mistake(np.asarray(got, dtype=float), mistakes, atol, rtol) if _is_numeric(got) else "")
    try:
        value = float(got)
    except (TypeError, ValueError):
        _fail(what, f"одно число {fmt(expected)}", f"{type(got).__name__}: {one_line(got, 80)}")
    if not math.isclose(value, expected, abs_tol=atol, rel_tol=rtol):
        _fail(what, *shown(expected, value), hint, mistake=_match_mistake(np.asarray(value), mistakes, atol, rtol))
    return value


def _is_numeric(x: Any) -> bool:
    try:
        np.asarray(x, dtype=float)
        return True
    except (TypeError, ValueError):
        return False


def check_pair(got: Any, what: str, names: tuple[str, str] = ("x", "y")) -> tuple[Any, Any]:
    """The answer must be a pair (tuple or list of two) named ``names`` in the docstring; return its two items."""
    _not_implemented_if_none(got, what)
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        _fail(what, f"кортеж из двух элементов ({names[0]}, {names[1]})",
              fmt(got) if _is_numeric(got) else type(got).__name__,
              f"верните пару — кортеж из двух значений ({names[0]}, {names[1]}), в этом порядке")
    return got[0], got[1]


def check_that(condition: bool, *, what: str, expected: str | None = None, got: str | None = None,
               hint: str = "", mistake: str = "") -> None:
    """A condition that must hold, with the words to explain it when it does not; ``mistake``: the words naming the
    typical mistake that explains the failure, when the check knows it (``""``: none)."""
    if not condition:
        _fail(what, expected, got, hint, mistake=mistake)


def check_unchanged(before: Any, after: Any, *, name: str, function: str) -> None:
    """An input must not be modified by the function under test."""
    if not np.array_equal(np.asarray(before), np.asarray(after)):
        _fail(f"{function} не меняет свои входы", fmt(before), fmt(after),
              f"функция изменила аргумент `{name}` на месте. Работайте с копией (np.array(x, dtype=float)) "
              "или создавайте новые массивы вместо `x -= ...`, `x[...] = ...`.")
