"""Which of the student's own functions a call went through: the feedback says "gae calls td_errors, fix that
first" only when the student's gae did call it.

Each top-level function the student wrote is replaced, in the module the checks call, by a thin wrapper that notes
its name under the outermost call it runs in. Runs where the student's code runs: in the worker (its answer carries
the names as data, grader.boundary.replies.entered) and, for the in-notebook self-check, in the student's kernel,
where the functions are first rebound to the snapshot module so the notebook's own namespace is left as it is.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import types
from typing import Callable


@contextlib.contextmanager
def room_for_tracing():
    """Twice the recursion limit while traced functions run (each call of one is two frames: a recursion of the
    student's that fits the limit untraced fits it traced); the limit as it was afterwards."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(2 * old)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


class Entered:
    """Records, for each outermost call of a traced function, the other traced functions it went through."""

    def __init__(self):
        self.calls: dict[str, list[str]] = {}  # outermost function -> the others it went through, first first
        self.outer: str | None = None
        self.traced: set[int] = set()  # the modules already traced (id)

    def trace(self, module: types.ModuleType, is_students: Callable[[types.FunctionType], bool],
              rebind: bool = False) -> types.ModuleType:
        """Wrap ``module``'s top-level functions written by the student (once per module); ``rebind``: first make
        each a copy whose globals are the module's own (a snapshot of a live namespace)."""
        if id(module) in self.traced:
            return module
        self.traced.add(id(module))
        for name, value in list(vars(module).items()):
            if inspect.isfunction(value) and not name.startswith("__") and is_students(value):
                if rebind:
                    value = _rebound(value, vars(module))
                setattr(module, name, self._wrap(name, value))
        return module

    def take(self, function: str) -> list[str]:
        """The functions the calls of ``function`` went through since the last take (and forget them)."""
        return self.calls.pop(function, [])

    def clear(self) -> None:
        self.calls.clear()

    def _wrap(self, name: str, func):
        entered = self

        @functools.wraps(func)
        def traced(*args, **kwargs):
            if entered.outer is None:
                entered.outer = name
                entered.calls.setdefault(name, [])
                try:
                    return func(*args, **kwargs)
                finally:
                    entered.outer = None
            went = entered.calls.setdefault(entered.outer, [])
            if name != entered.outer and name not in went:
                went.append(name)
            return func(*args, **kwargs)
        return traced


def _rebound(func: types.FunctionType, namespace: dict) -> types.FunctionType:
    """``func`` with ``namespace`` as its globals (the same code, defaults, closure and attributes)."""
    copy = types.FunctionType(func.__code__, namespace, func.__name__, func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__dict__.update(func.__dict__)
    copy.__qualname__, copy.__doc__, copy.__module__ = func.__qualname__, func.__doc__, func.__module__
    return copy
