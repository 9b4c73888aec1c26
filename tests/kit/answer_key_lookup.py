"""The lookup attack on the answer key (#26, tests/kit/test_answer_key.py): a submission that knows the public inputs.

The student's copy shows every public input its checks make: running the checks on any working code (the notebook's
self-check, grader.notebook.check) calls the student's functions with them. The attack records them (a fingerprint
of each call's arguments: numbers to 9 significant digits, arrays by dtype, shape and their numbers so rounded, a
generator by its state, any other object by its class and public attributes), then hands in functions that answer
exactly those calls, here by calling a copy of the reference, and raise KeyError on any other.

The submission carries this very module as ``_lookup.py`` (the worker uses :func:`fingerprint` and
:func:`remembered`, which need NumPy alone), its memory as ``_lookup_memory.py`` and the reference's modules as
``_lookup_reference_<module>.py``. Usage, to record: ``python answer_key_lookup.py HW OUT.json`` (the memory, and
what the self-check said of each part).
"""
from __future__ import annotations

import functools
import hashlib
import json
import shutil
import sys
from pathlib import Path

import numpy as np

DIGITS = "%.9g"


def fingerprint(args: tuple, kwargs: dict) -> str:
    """What names a call's arguments (the same in the process that records and in the worker that grades)."""
    text = json.dumps([_form(list(args), set()), _form(dict(sorted(kwargs.items())), set())], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _form(value, seen: set):
    if value is None or isinstance(value, (bool, np.bool_, str)):
        return value if not isinstance(value, np.bool_) else bool(value)
    if isinstance(value, (int, np.integer)):
        return ["int", int(value)]
    if isinstance(value, (float, np.floating)):
        return ["float", DIGITS % float(value)]
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return ["objects", list(value.shape), [_form(v, seen) for v in value.ravel().tolist()]]
        numbers = value.ravel().tolist()
        text = ",".join(DIGITS % x if isinstance(x, float) else str(x) for x in numbers)
        return ["array", value.dtype.str, list(value.shape), hashlib.sha256(text.encode()).hexdigest()]
    if isinstance(value, np.random.Generator):
        return ["generator", _form(value.bit_generator.state, seen)]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [_form(v, seen) for v in value]]
    if isinstance(value, dict):
        return ["dict", [[_form(k, seen), _form(v, seen)] for k, v in value.items()]]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted(json.dumps(_form(v, seen)) for v in value)]
    if id(value) in seen:
        return ["again", type(value).__qualname__]
    if callable(value) and hasattr(value, "__qualname__"):
        return ["callable", getattr(value, "__module__", ""), value.__qualname__]
    if hasattr(value, "__dict__"):
        seen = seen | {id(value)}
        kind = f"{type(value).__module__}.{type(value).__qualname__}"
        # an environment's generators of its spaces start from the system's entropy (as Gymnasium's do)
        return ["object", kind, [[k, _form(v, seen)] for k, v in sorted(vars(value).items())
                                 if not k.startswith("_") and k != "np_random"]]
    return ["repr", repr(value)]


def remembered(name: str, function, memory: dict):
    """``function``, answering only the calls ``memory`` holds for ``name`` (KeyError on any other)."""
    known = set(memory.get(name, ()))

    @functools.wraps(function)
    def lookup(*args, **kwargs):
        if fingerprint(args, kwargs) not in known:
            raise KeyError(f"{name}: этих входов нет среди открытых")
        return function(*args, **kwargs)

    return lookup


# ---- recording (the instructor's checkout, never the worker) --------------------------------------------------


def _reference_modules(hw) -> dict:
    import importlib.util

    sys.path.insert(0, str(hw.solutions_dir))  # the reference imports the provided modules by their plain names
    modules = {}
    for part in hw.parts:
        spec = importlib.util.spec_from_file_location(f"_lookup_reference_{part.module}",
                                                      hw.solutions_dir / f"{part.module}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[part.module] = module
    return modules


def _own_functions(module) -> dict:
    return {k: v for k, v in vars(module).items()
            if callable(v) and getattr(v, "__module__", None) == module.__name__ and not k.startswith("_")}


def record(hw_name: str) -> tuple[dict, dict]:
    """The fingerprints of every call the public checks of each part make (the self-check of a namespace of the
    reference's functions, in this process), and each part's self-check scoreboard."""
    import contextlib
    import io

    from grader.base import homeworks
    from grader.notebook import check

    hw = homeworks.load(hw_name)
    modules = _reference_modules(hw)
    memory: dict[str, set] = {}

    def recording(name, function):
        @functools.wraps(function)
        def call(*args, **kwargs):
            memory.setdefault(name, set()).add(fingerprint(args, kwargs))
            return function(*args, **kwargs)
        return call

    namespace = {}
    for module in modules.values():
        namespace.update({k: v for k, v in vars(module).items() if not k.startswith("_")})
    for module in modules.values():
        namespace.update({k: recording(k, f) for k, f in _own_functions(module).items()})
    boards = {}
    for part in hw.parts:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            check(part.id, dict(namespace), homework=hw.name)
        boards[part.id] = out.getvalue()
    return {k: sorted(v) for k, v in memory.items()}, boards


def write_submission(hw_name: str, memory: dict, folder: Path) -> None:
    """The submission: each part's module answers the remembered calls with a copy of the reference's function."""
    from grader.base import homeworks

    hw = homeworks.load(hw_name)
    folder.mkdir(parents=True)
    shutil.copy2(Path(__file__), folder / "_lookup.py")
    (folder / "_lookup_memory.py").write_text(f"MEMORY = {json.dumps(memory, indent=0)}\n", encoding="utf-8")
    modules = _reference_modules(hw)
    for part in hw.parts:
        reference = f"_lookup_reference_{part.module}"
        shutil.copy2(hw.solutions_dir / f"{part.module}.py", folder / f"{reference}.py")
        lines = ['"""The lookup attack: the public answers, remembered (tests/kit/answer_key_lookup.py)."""',
                 f"import {reference} as _reference", f"from {reference} import *  # noqa: F401,F403",
                 "from _lookup import remembered", "from _lookup_memory import MEMORY", ""]
        lines += [f"{name} = remembered({name!r}, _reference.{name}, MEMORY)"
                  for name in _own_functions(modules[part.module])]
        (folder / f"{part.module}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the kit's root: grader
    remembered_calls, scoreboards = record(sys.argv[1])
    Path(sys.argv[2]).write_text(json.dumps({"memory": remembered_calls, "scoreboards": scoreboards}),
                                 encoding="utf-8")
