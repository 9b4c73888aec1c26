"""A grade no submission can forge: hostile submissions score exactly what their real code earns.

Each case is a student's `ppo.py` written to get points without the work: the untouched stub (every function
raises NotImplementedError) plus code that attacks the grader. The real code earns 0, so each must score 0,
with the same checks and maxima as the reference. A few cases attack on top of the reference, which must keep
exactly its score: the attack neither adds nor removes points.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader import homeworks
from grader.homeworks import ROOT
from kit import HW, MODES, mode_env, run_check

pytestmark = pytest.mark.slow  # grades whole homeworks: left out of the everyday loop (-m "not slow")

STUB = ROOT / "homework" / HW / "ppo.py"
REFERENCE = ROOT / "solutions" / HW / "ppo.py"

# A line the grader's command line would have taken as a verdict before the checks had a process of their own.
FORGED = """
import json as _json
_FORGED = "".join(_json.dumps(r) + "\\n" for r in (
    [{"event": "result", "nodeid": f"tests/{HW}/test_ppo.py::test_{n}", "name": f"test_{n}", "title": "поддельная",
      "weight": -1000.0, "bonus": False, "outcome": "passed", "kind": "", "message": "", "traceback": ""}
     for n in ["td_errors_courier", "invented_check"]]
    + [{"event": "finished"}]))
""".replace("{HW}", HW)

ATTACKS = {
    # the results channel: every descriptor the process has, and the parent's, through /proc
    "forged_results_on_every_descriptor": FORGED + """
import os as _os

def _spray():
    for _fd in range(256):  # its own descriptors, among them the pipe of its answers
        try:
            _os.write(_fd, _FORGED.encode())
        except OSError:
            pass
    _spray_parent()

def _spray_parent():
    try:
        _fds = _os.listdir(f"/proc/{_os.getppid()}/fd")  # the checking process's, when it can be seen
    except OSError:
        return
    for _fd in _fds:
        try:
            with open(f"/proc/{_os.getppid()}/fd/{_fd}", "w") as _f:
                _f.write(_FORGED)
        except OSError:
            pass

_spray()
_todo = td_errors

def td_errors(rewards, values, last_value, gamma):
    _spray()
    return _todo(rewards, values, last_value, gamma)
""",
    "forged_results_into_the_grader": FORGED + """
import os as _os

for _pid in (_os.getppid(),):  # the process that started it: the checking process, where it can be seen
    try:
        _fds = _os.listdir(f"/proc/{_pid}/fd")
    except OSError:
        continue
    for _fd in _fds:
        try:
            with open(f"/proc/{_pid}/fd/{_fd}", "w") as _f:
                _f.write(_FORGED)
        except OSError:
            pass
""",
    "atexit_forgery": FORGED + """
import atexit as _atexit, os as _os, sys as _sys
_atexit.register(lambda: [_os.write(fd, _FORGED.encode()) for fd in (1, 2)])
_sys.stdout.write(_FORGED)
""",
    "patched_pytest_internals": """
import _pytest.runner, _pytest.python, _pytest.reports

_pytest.python.Function.runtest = lambda self: None
_pytest.runner.call_and_report = lambda item, when, log=True, **kw: _pytest.reports.TestReport(
    item.nodeid, item.location, {}, "passed", None, when, [])
_pytest.reports.TestReport.from_item_and_call = classmethod(lambda cls, item, call: cls(
    item.nodeid, item.location, {}, "passed", None, call.when, []))
""",
    "patched_grader_modules": """
import sys as _sys
import grader.checks, grader.explain, grader.results, grader.runner

grader.checks.check_close = lambda got, expected, **kw: got
grader.checks.check_float = lambda got, expected, **kw: got
grader.checks.check_pair = lambda got, what, names=None: (got, got)
grader.explain.explain = lambda exc, live=None: ("check", "")
grader.results.CheckResult.passed = property(lambda self: True)
for _name, _module in list(_sys.modules.items()):
    if _name.startswith("test_"):
        _module.check_close = grader.checks.check_close
""",
    "skipped_instead_of_not_implemented": """
from _pytest.outcomes import Skipped as NotImplementedError
import builtins as _builtins

_builtins.NotImplementedError = NotImplementedError

def _skip(*args, **kwargs):
    raise NotImplementedError("TODO")

td_errors = gae = ppo_clip_objective = normalize_advantages = ppo_loss = gae_with_boundaries = _skip
clipped_value_loss = _skip
""",
    "swapped_numpy_and_math": """
import math as _math, sys as _sys, types as _types
import numpy as _np

class _Yes(_types.ModuleType):
    def __getattr__(self, name):
        return getattr(_np, name)
    allclose = staticmethod(lambda *a, **k: True)
    isclose = staticmethod(lambda a, b, *r, **k: _np.ones(_np.broadcast(a, b).shape, dtype=bool))
    array_equal = staticmethod(lambda *a, **k: True)

_fake = _Yes("numpy")
_sys.modules["numpy"] = _fake
_math.isclose = lambda *a, **k: True
for _name, _module in list(_sys.modules.items()):
    if getattr(_module, "np", None) is _np:
        _module.np = _fake
""",
    "stack_peeking_answer": """
import sys as _sys
import numpy as _np

class _Peek:
    \"\"\"Whatever the check compares it with, it becomes: it reads `expected` from the checking frame.\"\"\"
    def _expected(self):
        frame = _sys._getframe(1)
        while frame is not None:
            for key in ("expected", "want"):
                if key in frame.f_locals:
                    return _np.asarray(frame.f_locals[key], dtype=float)
            frame = frame.f_back
        return _np.zeros(3)
    def __array__(self, dtype=None, copy=None):
        return self._expected()
    def __float__(self):
        return float(self._expected().ravel()[0])
    def __eq__(self, other):
        return True
    def __len__(self):
        return len(self._expected())
    def __iter__(self):
        return iter(self._expected())

def td_errors(rewards, values, last_value, gamma):
    return _Peek()

def gae(rewards, values, last_value, gamma, lam):
    return _Peek(), _Peek()

def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    return _Peek()
""",
    "ndarray_subclass": """
import numpy as _np

class _Agreeable(_np.ndarray):
    def __eq__(self, other):
        return _np.ones(_np.shape(other), dtype=bool)
    def __array_function__(self, func, types, args, kwargs):
        if func.__name__ in ("allclose", "array_equal"):
            return True
        if func.__name__ == "isclose":
            return _np.ones(_np.broadcast(*args[:2]).shape, dtype=bool)
        return super().__array_function__(func, types, args, kwargs)

def td_errors(rewards, values, last_value, gamma):
    return _np.zeros(len(rewards)).view(_Agreeable)

def gae(rewards, values, last_value, gamma, lam):
    z = _np.zeros(len(rewards)).view(_Agreeable)
    return z, z
""",
    "reference_read_from_disk": """
import os as _os
from pathlib import Path as _Path

def _candidates():
    # the grading kit's own root (another checkout elsewhere on the machine is its owner's to close: a user of the
    # submission's own reads whatever every user may)
    try:
        import grader
        yield _Path(grader.__file__).resolve().parents[1]
    except Exception:
        pass

for _root in _candidates():
    _path = _root / "solutions" / "{HW}" / "ppo.py"
    try:
        exec(compile(_path.read_text(encoding="utf-8"), "ppo.py", "exec"), globals())
        break
    except OSError:
        continue
""".replace("{HW}", HW),
    "sys_exit_inside_calls": """
import sys as _sys

def td_errors(rewards, values, last_value, gamma):
    _sys.exit(0)
""",
    "os_exit_inside_calls": """
import os as _os

def gae(rewards, values, last_value, gamma, lam):
    _os._exit(0)
""",
    "kill_the_checking_process": """
import os as _os, signal as _signal

def td_errors(rewards, values, last_value, gamma):
    for _pid in {_os.getppid(), _os.getpgid(0)}:
        try:
            _os.kill(_pid, _signal.SIGKILL)
        except OSError:
            pass
    raise NotImplementedError
""",
    "forged_answer_frames": """
import os as _os, struct as _struct, threading as _threading, time as _time

def _flood():
    frame = b'{"$tuple":["return",[0.35,-0.6,1.0],{"$dict":[]}]}'
    payload = _struct.pack("<II", len(frame), 0) + frame
    while True:
        for _fd in range(3, 64):
            try:
                _os.write(_fd, _struct.pack("<Q", len(payload)) + payload)
            except OSError:
                pass
        _time.sleep(0.01)

_threading.Thread(target=_flood, daemon=True).start()
""",
    # the hang report: a stack dump naming a "frame" in a scratch file that is a link to the kit's files, and
    # every file the worker can find by the hang file's old name replaced by a link to a provided module
    "forged_hang_report": """
import os as _os, glob as _glob

def _plant():
    _here = _os.path.dirname(_os.path.abspath(__file__))
    for _target, _link in (("{root}/solutions/{hw}/ppo.py", "leak.py"), ("/proc/self/environ", "env.py")):
        try:
            _os.symlink(_target, _os.path.join(_here, _link))
        except OSError:
            pass
    for _old in _glob.glob(_os.path.join(_os.path.dirname(_here), "*.txt")):
        try:
            _os.remove(_old)
            _os.symlink("{root}/tests/{hw}/shared/control_envs.py", _old)
        except OSError:
            pass
    _dump = "".join(f'  File "{_os.path.join(_here, n)}", line {l} in td_errors\\n' for n, l in
                    (("leak.py", 1), ("leak.py", 2), ("env.py", 1)))
    for _fd in range(3, 64):
        try:
            _os.pwrite(_fd, ("Current thread 0x1 (most recent call first):\\n" + _dump).encode(), 0)
        except OSError:
            pass

def td_errors(rewards, values, last_value, gamma):
    _plant()
    while True:
        pass
""".replace("{root}", str(ROOT)).replace("{hw}", HW),
    # text that would clear the instructor's screen and draw a full score: in messages, answers, a type's name
    "escape_sequences_in_text": """
_FAKE = "\\x1b[2J\\x1b[H\\nИтого: 100 из 100 баллов (100%)\\n\\x1b]0;title\\x07\\u202e"

def td_errors(rewards, values, last_value, gamma):
    raise ValueError(_FAKE)

def gae(rewards, values, last_value, gamma, lam):
    return _FAKE

def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    raise type(_FAKE, (ValueError,), {})(_FAKE)
""",
    "unplain_objects_in_answers": """
import collections as _collections, fractions as _fractions

class _Float(float):
    def __eq__(self, other):
        return True

def td_errors(rewards, values, last_value, gamma):
    return [_Float(0.35), _Float(-0.6), _Float(1.0)]

def gae(rewards, values, last_value, gamma, lam):
    return _fractions.Fraction(1, 3), _collections.UserList([1.0])

def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    return _Float(0.1)
""",
}

ON_REFERENCE = {  # attacks that must neither add nor remove points from a correct submission
    "forged_results_into_the_grader", "atexit_forgery", "patched_pytest_internals", "patched_grader_modules",
    "swapped_numpy_and_math",
}
# Files beside the modules that pytest would load as a plugin if it ever saw the submission's folder as a path: each
# makes every check pass without running it, and leaves a mark where the test can look (MARK).
BESIDE = {
    "conftest.py": """
import os, pytest
open(os.environ.get("HWKIT_TEST_MARK", "/tmp/hwkit-mark"), "a").write("conftest ran\\n")

@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    return True
""",
    "pytest.ini": "[pytest]\naddopts = -p no:grader.plugin\n",
}


def _grade(tmp: Path, base: Path, code: str, beside: dict[str, str] | None = None, env: dict | None = None) -> tuple:
    folder = tmp / "student"
    folder.mkdir(parents=True)
    (folder / "ppo.py").write_text(base.read_text(encoding="utf-8") + "\n\n" + textwrap.dedent(code), encoding="utf-8")
    for name, text in (beside or {}).items():
        (folder / name).write_text(text.replace("/tmp/hwkit-mark", str(tmp / "mark")), encoding="utf-8")
    out = tmp / "results.json"
    proc = run_check(HW, "ppo", "--dir", str(folder), "--json", str(out), "--timeout", "5", env_extra=env)
    return proc, json.loads(out.read_text(encoding="utf-8")) if out.is_file() else None


def _grade_notebook(tmp: Path, beside: dict[str, str], env: dict | None = None) -> tuple:
    folder = tmp / "student"
    folder.mkdir(parents=True)
    notebook = folder / "hw.ipynb"
    shutil.copyfile(ROOT / "notebooks" / f"{HW}.ipynb", notebook)
    for name, text in beside.items():
        (folder / name).write_text(text.replace("/tmp/hwkit-mark", str(tmp / "mark")), encoding="utf-8")
    out = tmp / "results.json"
    proc = run_check(HW, "ppo", "--notebook", str(notebook), "--json", str(out), "--timeout", "5", env_extra=env)
    return proc, json.loads(out.read_text(encoding="utf-8")) if out.is_file() else None


CASES = [(name, "stub") for name in ATTACKS] + [(name, "reference") for name in sorted(ON_REFERENCE)]


def kit_digest() -> dict[str, str]:
    """The kit's files that grading reads or imports: the grader, the graded suites, the reference, the stubs."""
    folders = [ROOT / "grader", ROOT / "tests" / HW, ROOT / "solutions" / HW, ROOT / "homework" / HW]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for f in folders for p in sorted(f.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def kit_before():
    return kit_digest()


@pytest.fixture(scope="module", params=MODES)
def graded(request, tmp_path_factory, kit_before):
    """Every case graded, two at a time, as soon as the first test asks; plus the reference as a student folder; in
    each mode a grade for the record is given in (with namespaces, and as a user of the submission's own)."""
    env = mode_env(request.param)
    pool = ThreadPoolExecutor(max_workers=2)
    futures = {(name, base): pool.submit(_grade, tmp_path_factory.mktemp(f"{name}-{base}"),
                                         STUB if base == "stub" else REFERENCE, ATTACKS[name], None, env)
               for name, base in CASES}
    futures["honest"] = pool.submit(_grade, tmp_path_factory.mktemp("honest"), REFERENCE, "", None, env)
    futures["beside"] = pool.submit(_grade, tmp_path_factory.mktemp("beside"), STUB, "", BESIDE, env)
    futures["beside-notebook"] = pool.submit(_grade_notebook, tmp_path_factory.mktemp("beside-notebook"), BESIDE,
                                             env)
    yield futures
    pool.shutdown(wait=True)
    assert kit_digest() == kit_before, "an attack changed the kit's own files"


@pytest.mark.parametrize("name,base", CASES, ids=[f"{n}-on-{b}" for n, b in CASES])
def test_attack_scores_what_its_real_code_earns(name, base, graded):
    proc, data = graded[name, base].result()
    _, honest = graded["honest"].result()
    assert data is not None, proc.stdout + proc.stderr
    assert proc.returncode == (0 if base == "reference" else 1), proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    # the checks and what each is worth come from the grader's own collection
    worth = [(t["name"], t["max_score"]) for t in data["tests"]]
    assert worth == [(t["name"], t["max_score"]) for t in honest["tests"]]
    output = proc.stdout + proc.stderr + json.dumps(data, ensure_ascii=False)
    leaked = [line for line in REFERENCE.read_text(encoding="utf-8").splitlines()
              if len(line.strip()) > 25 and line.strip() in output and line not in STUB.read_text(encoding="utf-8")]
    assert not leaked, f"lines of solutions/ in the output: {leaked[:3]}"
    assert "\x1b" not in output and "\u202e" not in output and "HWKIT_RUN_TOKEN" not in output
    assert not [line for line in proc.stdout.splitlines() if line.startswith("Итого: 100 из 100")] or base != "stub"
    if base == "stub":
        assert data["score"] == 0, [t["name"] for t in data["tests"] if t["status"] == "passed"]
    else:
        assert data["score"] == honest["score"] > 0
        assert [t["status"] for t in data["tests"]] == [t["status"] for t in honest["tests"]]


def test_answers_that_are_not_plain_data_are_refused_with_what_to_return(graded):
    _, data = graded["unplain_objects_in_answers", "stub"].result()
    outputs = {t["extra_data"]["check"]: t.get("output", "") for t in data["tests"]}
    assert "подкласс float" in outputs["test_td_errors_courier"], outputs["test_td_errors_courier"]
    assert "верните" in outputs["test_td_errors_courier"]
    _, data = graded["ndarray_subclass", "stub"].result()
    outputs = {t["extra_data"]["check"]: t.get("output", "") for t in data["tests"]}
    assert "подкласс np.ndarray" in outputs["test_td_errors_courier"], outputs["test_td_errors_courier"]


def test_a_killed_or_exiting_worker_costs_only_its_checks(graded):
    for name in ("sys_exit_inside_calls", "os_exit_inside_calls"):
        _, data = graded[name, "stub"].result()
        kinds = {t["extra_data"]["kind"] for t in data["tests"]}
        assert kinds <= {"todo", "error", "crash"}, kinds
    _, data = graded["os_exit_inside_calls", "stub"].result()
    gae = [t for t in data["tests"] if t["extra_data"]["check"].startswith("test_gae_courier")]
    assert gae and all(t["extra_data"]["kind"] == "crash" for t in gae)


@pytest.mark.parametrize("case", ["beside", "beside-notebook"])
def test_a_conftest_beside_the_modules_or_the_notebook_is_never_loaded(graded, case):
    proc, data = graded[case].result()
    assert data is not None, proc.stdout + proc.stderr
    assert data["score"] == 0, [t["name"] for t in data["tests"] if t["status"] == "passed"]
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    folder = Path(proc.args[proc.args.index("--dir" if case == "beside" else "--notebook") + 1])
    student = folder if folder.is_dir() else folder.parent
    assert not (student.parent / "mark").exists(), "the conftest.py ran"


def _doing_nothing(folder: Path, how: str) -> None:
    """Every part's module with each function replaced: raising ValueError on every input, returning its first
    argument (``echo``: at γ = 0 the returns are the rewards), zeroing its array arguments and returning zeros
    (``zeroing``), or, for control, one constant answer (the greedy action of a check's Q) after env.reset()."""
    import ast

    folder.mkdir(parents=True)
    hw = homeworks.load(HW)
    for module in hw.modules:
        source = (hw.homework_dir / f"{module}.py").read_text(encoding="utf-8")
        names = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name[0] != "_"]
        if how == "raise":
            extra = "".join(f"\n\ndef {n}(*args, **kwargs):\n    raise ValueError('неверный вход')\n" for n in names)
        elif how == "echo":
            extra = "".join(f"\n\ndef {n}(*args, **kwargs):\n    return args[0] if args else None\n" for n in names)
        elif how == "zeroing":  # every array argument zeroed in place, zeros returned: a check whose oracle reads the
            # arguments after the call would agree
            extra = "".join(f"\n\ndef {n}(*args, **kwargs):\n"
                            "    arrays = [a for a in [*args, *kwargs.values()] if isinstance(a, np.ndarray)]\n"
                            "    for a in arrays:\n        a[...] = 0\n"
                            "    return np.zeros_like(arrays[0], dtype=float) if arrays else 0.0\n" for n in names)
        elif module == "control":
            extra = textwrap.dedent("""

                def epsilon_greedy(q_values, epsilon, rng):
                    return 1


                def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
                    env.reset(seed=seed)
                    return np.zeros((env.observation_space.n, env.action_space.n)), np.full(n_episodes, -13.0)


                sarsa = q_learning
                """)
        else:
            extra = ""
        (folder / f"{module}.py").write_text(source + extra, encoding="utf-8")


@pytest.mark.parametrize("how", ["raise", "echo", "zeroing", "constant"])
def test_code_that_does_nothing_earns_nothing(tmp_path, how):
    _doing_nothing(tmp_path / "student", how)
    out = tmp_path / "results.json"
    proc = run_check(HW, "--dir", str(tmp_path / "student"), "--json", str(out))
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["score"] == 0, [t["extra_data"]["check"] for t in data["tests"] if t["status"] == "passed"]
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr


MUTATES = """
import functools as _functools

def _zeroing(f):
    @_functools.wraps(f)
    def wrapper(*args, **kwargs):
        out = f(*args, **kwargs)
        for a in args:
            if hasattr(a, "fill"):
                a.fill(0)  # the mistake: the caller's arrays are changed in place
        return out
    return wrapper

td_errors, gae, normalize_advantages = _zeroing(td_errors), _zeroing(gae), _zeroing(normalize_advantages)
"""
HIDES = """
import sys as _sys
_w = _sys.modules.get("grader.boundary.worker")
if _w is not None:  # the worker's own code, patched from inside: it says nothing changed, or sends nothing back
    _w._fingerprint = lambda *a, **k: "same"
    _w.Worker._sync = lambda self, *a, **k: {"changed": {}, "names": {}, "journals": {}}
"""


def test_a_submission_cannot_hide_that_it_changes_its_inputs(tmp_path):
    (_, plain), (_, hidden) = (_grade(tmp_path / name, REFERENCE, code)
                               for name, code in (("plain", MUTATES), ("hidden", MUTATES + HIDES)))
    assert plain is not None and hidden is not None
    assert 0 < plain["score"] < 20
    assert hidden["score"] <= plain["score"], [t["extra_data"]["check"] for t in hidden["tests"]
                                               if t["status"] == "passed"]


def test_a_notebook_cells_error_is_data_in_every_output(tmp_path):
    import nbformat

    notebook = nbformat.read(str(ROOT / "notebooks" / f"{HW}.ipynb"), as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("raise RuntimeError('\\x1b[31mRED\\x1b[0m\\n```\\n=SUM(1)')"))
    path = tmp_path / "hw.ipynb"
    nbformat.write(notebook, str(path))
    out = tmp_path / "results.json"
    proc = run_check(HW, "ppo", "--notebook", str(path), "--json", str(out))
    data = json.loads(out.read_text(encoding="utf-8"))
    assert "RED" in proc.stdout, proc.stdout  # the note is shown, escaped
    assert "\x1b" not in proc.stdout + proc.stderr + out.read_text(encoding="utf-8")
    for text in [data["output"]] + [t["output"] for t in data["tests"]]:
        if text.startswith("`"):  # a code block: no line inside it is a fence that could close it
            fence = text.split("\n", 1)[0]
            assert not any(line.strip().startswith(fence) for line in text.splitlines()[1:-1]), text
