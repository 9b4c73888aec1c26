"""What came back from a call, judged in the checking process.

What this module accepts from the worker: an answer ``("return", value, sync)``, ``("raise", error, sync)`` or
``("unsendable", what, sync)``, already decoded by :mod:`wire` into plain data, where ``sync`` holds every
mutable argument as the call left it, the journals of the kit's environments and the names of the functions the
call went through. Anything of another shape is a
broken answer (:class:`WorkerCrashed`). Whether an argument changed is decided here, by comparing it with the
test's own object, never on the worker's word: an argument the worker does not send back is a broken answer too.
The changed values are copied into the test's objects, the journals replayed on its environments.
"""
from __future__ import annotations

import pickle

import numpy as np

from grader.base.escape import identifiers, one_line
from grader.boundary import journal, wire
from grader.boundary.errors import BadAnswer, WorkerCrashed


def shape(answer, tag: str, n: int) -> bool:
    return type(answer) is tuple and len(answer) == n and answer[0] == tag


def tracked(args: tuple, kwargs: dict, kit: set) -> set:
    """The arguments a call must send back as it left them: the mutable ones that are not the kit's objects
    (those come back as journals)."""
    return {k for k, v in [*enumerate(args), *kwargs.items()]
            if type(v).__module__ not in kit and fingerprint(v) is not None}


def unpack(answer, function: str, expected: set) -> tuple:
    """``(kind, value, sync)`` of a well-formed answer that sends back every argument in ``expected``."""
    if type(answer) is not tuple or len(answer) != 3 or answer[0] not in ("return", "raise", "unsendable") \
            or type(answer[2]) is not dict or (answer[0] == "raise" and type(answer[1]) is not dict):
        raise WorkerCrashed(f"ответ на вызов {function} не читается")
    sync = answer[2]
    if answer[0] != "unsendable" and expected - set(sync.get("changed") or {}) - set(sync.get("journals") or {}) \
            - set(sync.get("unsendable") or {}):  # "unchanged" is judged here
        raise WorkerCrashed(f"ответ на вызов {function} пришёл без его аргументов")
    return answer


def fingerprint(value) -> bytes | None:
    """Bytes that change when a mutable argument of the test's changes (None for what a call cannot change, or
    what this process cannot compare); the worker tracks the same arguments (worker._fingerprint)."""
    if not isinstance(value, (np.ndarray, list, dict, np.random.Generator, bytearray, tuple)):
        return None
    try:
        if isinstance(value, np.random.Generator):
            return repr(value.bit_generator.state).encode()
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)  # the test's own objects, or plain data
    except Exception:  # noqa: BLE001
        return None


def apply(sync: dict, args: tuple, kwargs: dict, function: str) -> list:
    """Replay the journals on the test's environments, then copy the arguments the call changed into the test's
    objects; return the keys of those that changed (compared here)."""
    slots = {**dict(enumerate(args)), **kwargs}
    for key, entries in (sync.get("journals") or {}).items():
        if key in slots and type(entries) is wire.Journal:
            journal.replay_when_used(slots[key], entries)
    for message in (sync.get("unsendable") or {}).values():
        raise BadAnswer(f"{function} изменила свой аргумент и положила в него {one_line(message, 300)}")
    changed = []
    for key, value in (sync.get("changed") or {}).items():
        if key in slots and fingerprint(slots[key]) != fingerprint(value):
            merge(slots[key], value)
            changed.append(key)
    return changed


def entered(sync: dict) -> list[str]:
    """The names of the functions the worker says a call went through: identifiers, at most 100 of them (they only
    word the feedback; a name that is no function of the module is never shown)."""
    names = sync.get("entered")
    return identifiers(names) if type(names) is list else []


def merge(orig, new):
    """Make ``orig`` equal to ``new`` in place where it is mutable; return what should stand in its place."""
    if isinstance(orig, np.ndarray) and type(new) is np.ndarray and orig.shape == new.shape and orig.flags.writeable:
        np.copyto(orig, new, casting="unsafe")
        return orig
    if isinstance(orig, np.random.Generator) and type(new) is np.random.Generator:
        if type(orig.bit_generator) is type(new.bit_generator):
            orig.bit_generator.state = new.bit_generator.state
            return orig
        return new
    if type(orig) is list and type(new) is list:
        orig[:] = [merge(o, n) for o, n in zip(orig, new)] + new[len(orig):]
        return orig
    if type(orig) is dict and type(new) is dict:
        for key in [k for k in orig if k not in new]:
            del orig[key]
        for key, value in new.items():
            orig[key] = merge(orig[key], value) if key in orig else value
        return orig
    if isinstance(orig, tuple) and type(new) is tuple and len(orig) == len(new):
        for o, n in zip(orig, new):
            merge(o, n)
        return orig
    return new
