"""The journal: what the student's code did to the kit's environments, as calls the checking process replays.

The worker side (:func:`record`): an environment passed to a call records every public method call made on it
and on the kit objects it holds, as ``(path, method, args, kwargs)``; the journal crosses as plain data
(:class:`wire.Journal`).

The checking side (:func:`replay`): what this module accepts from the worker is a closed protocol, the
environment API's own calls and nothing else: ``reset`` and ``step`` on the environment, ``sample``, ``seed``
and ``contains`` on its ``action_space`` and ``observation_space``, with plain arguments and public keyword
names. A journal naming anything else is refused whole, before any call; a replay has a deadline. The test's own
environment makes the calls, so what it records (its episodes) is what this process computed, never what the
worker claims.
"""
from __future__ import annotations

import time
import types

from grader.base.escape import one_line
from grader.boundary import wire
from grader.boundary.errors import WorkerCrashed

_RECORDING: dict[type, type] = {}  # a kit class -> its subclass that records the public method calls


def record(obj, calls: list, path: tuple, kit: frozenset, seen: set | None = None, depth: list | None = None):
    """Make ``obj`` (one of the kit's objects: an environment) and the kit objects it holds (its spaces, a wrapped
    environment) record every public method call the student's code makes on them into ``calls`` as ``(path,
    method, args, kwargs)``, for the grading process to replay on its own object. Calls the kit's methods make
    inside such a call are not recorded (the replay makes them again). The object's class is swapped for a
    recording subclass: a call costs one more frame."""
    seen = set() if seen is None else seen
    depth = [0] if depth is None else depth  # > 0 inside a recorded call: shared by the objects of one journal
    if id(obj) in seen or not hasattr(obj, "__dict__"):
        return
    seen.add(id(obj))
    cls = type(obj)
    if cls not in _RECORDING:
        _RECORDING[cls] = type(cls.__name__, (cls,), {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                                      **{name: _recording(name, method) for name, method in
                                                         _public_methods(cls)}})
    try:
        obj.__dict__["_hwkit_record"] = (calls, path, depth)
        obj.__class__ = _RECORDING[cls]
    except TypeError:
        return
    for name, value in list(vars(obj).items()):
        if not name.startswith("_") and is_kit(value, kit):
            record(value, calls, path + (name,), kit, seen, depth)


def _public_methods(cls):
    for name in dir(cls):
        method = getattr(cls, name, None)
        if not name.startswith("_") and isinstance(method, types.FunctionType):
            yield name, method


def _recording(name: str, method):
    def record(self, *args, **kwargs):
        calls, path, depth = self.__dict__["_hwkit_record"]
        if depth[0]:  # the kit's own call inside a recorded one
            return method(self, *args, **kwargs)
        calls.append((path, name, args, kwargs))
        depth[0] += 1
        try:
            return method(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    record.__name__ = record.__qualname__ = name
    return record


def is_kit(obj, kit: frozenset) -> bool:
    return type(obj).__module__ in kit


# The journal is a closed protocol: the environment API's own calls, on the environment or its spaces, nothing else
# (no attribute paths into its data, no other method: a journal that names one is refused whole)
_SPACE_METHODS = frozenset({"sample", "seed", "contains"})
JOURNAL_CALLS = frozenset({((), "reset"), ((), "step")}
                          | {((space,), m) for space in ("action_space", "observation_space") for m in _SPACE_METHODS})
REPLAY_LIMIT = 30.0  # s for replaying one journal in this process


def replay(root, journal: wire.Journal) -> None:
    """Make on ``root`` (an environment of the test) the method calls the student's code made on its copy."""
    try:
        entries = list(journal.entries())
    except wire.WireError as exc:
        raise WorkerCrashed(f"журнал вызовов среды не читается: {exc}") from None
    refused = next(((p, n) for p, n, _, _ in entries if (tuple(p), n) not in JOURNAL_CALLS), None)
    if refused is not None:
        raise WorkerCrashed("в журнале вызовов среды — вызов не из API среды: "
                            + one_line(".".join([*map(str, refused[0]), str(refused[1])]), 80))
    deadline = time.monotonic() + REPLAY_LIMIT
    for i, (path, name, args, kwargs) in enumerate(entries):
        if i % 1024 == 0 and time.monotonic() > deadline:
            raise WorkerCrashed(f"журнал вызовов среды не повторить за {REPLAY_LIMIT:g} с")
        target = getattr(root, path[0]) if path else root
        getattr(target, name)(*args, **{_public(k): v for k, v in kwargs.items()})


_PENDING: dict[type, type] = {}


def replay_when_used(env, journal: wire.Journal) -> None:
    """Replay ``journal`` on ``env`` the first time the test touches ``env`` again (reads an attribute, calls a
    method, passes it to another call): a run of 500 episodes whose environment no test looks at afterwards
    costs no replay. An object whose class cannot be swapped is replayed at once."""
    cls = type(env)
    if cls not in _PENDING:
        def __getattribute__(self, name):
            if name == "__class__":
                return cls
            pending = object.__getattribute__(self, "_hwkit_pending")
            object.__setattr__(self, "__class__", cls)
            object.__delattr__(self, "_hwkit_pending")
            replay(self, pending)
            return getattr(self, name)

        _PENDING[cls] = type(cls.__name__, (cls,), {"__getattribute__": __getattribute__,
                                                     "__module__": cls.__module__, "__qualname__": cls.__qualname__})
    try:
        object.__setattr__(env, "_hwkit_pending", journal)
        object.__setattr__(env, "__class__", _PENDING[cls])
    except (TypeError, AttributeError):  # __slots__, a builtin: no deferring
        replay(env, journal)


def _public(name) -> str:
    if type(name) is not str or not name.isidentifier() or name.startswith("_"):
        raise WorkerCrashed("журнал вызовов среды не читается")
    return name
