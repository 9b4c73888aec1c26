"""A call of the student's function told in one line, for ``-v`` on a wrong answer: what was called with what, and
what came back (arguments summarised: an array by its shape, dtype and a few values; an environment by its class).

The values are the checking process's own (the test's arguments) or plain data decoded from the worker (the
answer); the text is escaped (grader.base.escape.printable) and cut, so a hostile answer cannot fill the screen.
"""
from __future__ import annotations

import numpy as np

from grader.base.escape import printable

# > 0 while a check's probe runs (grader.grading.checks.attempt): its calls are not the call a failure tells of
# (the session tells no call of a probe)
PROBING = [0]

WIDTH = 70  # characters for one value


def value(x, depth: int = 0, at: int | None = None) -> str:
    """``x`` in a few words; ``at``: an array's item (its flat index) the words must show, the first that differs
    from the expected answer."""
    if isinstance(x, np.ndarray):
        return _around(x, at) if at is not None and 0 <= at < x.size and x.dtype.kind in "biuf" else _array(x)
    if isinstance(x, (bool, int, float, complex, np.generic)) or x is None:
        return _cut(_number(x))
    if isinstance(x, str):
        return _cut(repr(x))
    if isinstance(x, (list, tuple)):
        if depth < 2 and len(x) <= 8:
            inner = ", ".join(value(v, depth + 1) for v in x)
            return _cut(f"[{inner}]" if isinstance(x, list) else f"({inner}{',' if len(x) == 1 else ''})")
        kind = "список" if isinstance(x, list) else "кортеж"
        return f"{kind} из {len(x)}: [{value(x[0], depth + 1)}, …, {value(x[-1], depth + 1)}]" if x else f"{kind} []"
    if isinstance(x, dict):
        keys = ", ".join(printable(str(k))[:20] for k in list(x)[:6])
        return _cut(f"словарь с ключами {keys}{', …' if len(x) > 6 else ''}")
    if isinstance(x, np.random.Generator):
        return "np.random.Generator"
    return _cut(f"<{type(x).__name__}>")


def call(function: str, args: tuple, kwargs: dict) -> str:
    """``function(arg, …, name=arg)`` with each argument summarised."""
    parts = [value(a) for a in args] + [f"{printable(str(k))}={value(v)}" for k, v in kwargs.items()]
    return f"{function}({', '.join(parts)})"


def _number(x) -> str:
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.6g}"
    try:
        return printable(str(x.item() if isinstance(x, np.generic) else x))
    except ValueError:  # an integer of more digits than Python converts to text
        return "целое число из тысяч цифр"


def _array(a: np.ndarray) -> str:
    head = f"массив {a.shape} {a.dtype}"
    if a.dtype.kind not in "biuf" or a.size == 0:
        return head
    flat = a.ravel()
    shown = flat if flat.size <= 6 else np.concatenate([flat[:3], flat[-3:]])
    numbers = [_number(v) for v in shown]
    if flat.size > 6:
        numbers[3:3] = ["…"]
    return _cut(f"{head}: [{', '.join(numbers)}]") if a.ndim == 1 or flat.size <= 6 else _cut(
        f"{head}, подряд: [{', '.join(numbers)}]")


def _around(a: np.ndarray, at: int) -> str:
    """The array as ``_array`` heads it, with as many items around item ``at`` (flat) as fit in WIDTH: never cut
    before that item, the window grown right then left by one item at a time."""
    flat, head = a.ravel(), f"массив {a.shape} {a.dtype}"

    def text(lo: int, hi: int) -> str:
        numbers = ["…"] * (lo > 0) + [_number(v) for v in flat[lo:hi + 1]] + ["…"] * (hi < flat.size - 1)
        where = "" if lo == 0 and hi == flat.size - 1 else f", позиции {lo}–{hi}" if a.ndim == 1 else \
            f", подряд, позиции {lo}–{hi}"
        return printable(f"{head}{where}: [{', '.join(numbers)}]")

    lo = hi = at
    best = text(lo, hi)
    grown = True
    while grown:
        grown = False
        for step in ((0, 1), (-1, 0)):
            lo2, hi2 = lo + step[0], hi + step[1]
            if 0 <= lo2 and hi2 < flat.size and len(candidate := text(lo2, hi2)) <= WIDTH:
                lo, hi, best, grown = lo2, hi2, candidate, True
    return best


def _cut(text: str) -> str:
    text = printable(text)
    return text if len(text) <= WIDTH else text[:WIDTH - 1] + "…"
