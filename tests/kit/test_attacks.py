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

from grader.base import homeworks
from grader.base.homeworks import ROOT
from kit import HW, MODES, collected, mode_env, run_check

pytestmark = pytest.mark.slow  # grades whole homeworks: left out of the everyday loop (-m "not slow")

STUB = ROOT / "homework" / HW / "ppo.py"
REFERENCE = ROOT / "solutions" / HW / "ppo.py"
# lines of the reference that the output would show were a file the hang report names ever read: long, and not the
# stub's (the leak check of test_attack_scores_what_its_real_code_earns), the first three
LONG_LINES = [n for n, line in enumerate(REFERENCE.read_text(encoding="utf-8").splitlines(), 1)
              if len(line.strip()) > 25 and line not in STUB.read_text(encoding="utf-8")][:3]

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
import grader.grading.checks, grader.grading.explain, grader.base.results, grader.grading.runner

grader.grading.checks.check_close = lambda got, expected, **kw: got
grader.grading.checks.check_float = lambda got, expected, **kw: got
grader.grading.checks.check_pair = lambda got, what, names=None: (got, got)
grader.grading.explain.explain = lambda exc, live=None: ("check", "")
grader.base.results.CheckResult.passed = property(lambda self: True)
for _name, _module in list(_sys.modules.items()):
    if _name.startswith("test_"):
        _module.check_close = grader.grading.checks.check_close
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
    # the hang report: a stack dump naming "frames" in scratch files that are links to the kit's files (lines of the
    # reference, the environment), written into the hang file ahead of the watchdog's own dump, and every file the
    # worker can find by the hang file's old name replaced by a link to a provided module. The watchdog empties the
    # file before it writes; were it not to, and were the report to read the files a dump names, the reference's
    # lines would reach the output (seen in the user mode with both protections removed: the leak check fails)
    "forged_hang_report": """
import os as _os, glob as _glob, stat as _stat

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
    # a main thread's block, as the watchdog's dump writes one, written ahead of it (at the file's position, which
    # the real dump then follows): its frames name the links, at lines of the reference long enough to be told
    _dump = "".join(f'  File "{_os.path.join(_here, n)}", line {l} in td_errors\\n' for n, l in
                    [("leak.py", l) for l in {lines}] + [("env.py", 1)])
    _dump = ("Thread 0x1 (most recent call first):\\n" + _dump
             + '  File "/kit/grader/boundary/worker.py", line 1 in main\\n\\n')
    for _fd in range(3, 64):
        try:
            if _stat.S_ISREG(_os.fstat(_fd).st_mode):  # the hang file is a file; a pipe is the worker's channel
                _os.write(_fd, _dump.encode())
        except OSError:
            pass

def td_errors(rewards, values, last_value, gamma):
    _plant()
    while True:
        pass
""".replace("{root}", str(ROOT)).replace("{hw}", HW).replace("{lines}", str(LONG_LINES)),
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
    "pytest.ini": "[pytest]\naddopts = -p no:grader.grading.plugin\n",
}


# The time limit per check these gradings are given (the part's own is 10 s): an attack that hangs is reported at
# the limit, whatever it is, so the hang report's forgery waits for 1 s of CPU, not 5 (the verdicts and the report's
# text are the same but for the limit's figure: each check's kind compared at both limits)
TIMEOUT = {"forged_hang_report": "1"}


def _grade(tmp: Path, base: Path, code: str, beside: dict[str, str] | None = None, env: dict | None = None,
           timeout: str = "5") -> tuple:
    folder = tmp / "student"
    folder.mkdir(parents=True)
    (folder / "ppo.py").write_text(base.read_text(encoding="utf-8") + "\n\n" + textwrap.dedent(code), encoding="utf-8")
    for name, text in (beside or {}).items():
        (folder / name).write_text(text.replace("/tmp/hwkit-mark", str(tmp / "mark")), encoding="utf-8")
    out = tmp / "results.json"
    proc = run_check(HW, "ppo", "--dir", str(folder), "--json", str(out), "--timeout", timeout, env_extra=env)
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
    # the honest grade first: every test waits for it, so the first test would otherwise wait for (and a per-test
    # CPU profile charge to it) nearly every grading of the module
    futures = {"honest": pool.submit(_grade, tmp_path_factory.mktemp("honest"), REFERENCE, "", None, env)}
    futures.update({(name, base): pool.submit(_grade, tmp_path_factory.mktemp(f"{name}-{base}"),
                                              STUB if base == "stub" else REFERENCE, ATTACKS[name], None, env,
                                              TIMEOUT.get(name, "5"))
                    for name, base in CASES})
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


def _doing_nothing(folder: Path, how: str, replaced: dict[str, str] | None = None) -> None:
    """Every part's module with each function replaced: raising ValueError on every input, returning its first
    argument (``echo``: at γ = 0 the returns are the rewards), zeroing its array arguments and returning zeros
    (``zeroing``), or, for control, one constant answer (the greedy action of a check's Q) after env.reset()
    (``resets``); or an answer of the right shape and type that does nothing (SHAPED): zeros or a constant (``zeros``,
    ``constant``), the reference's train wired as its docstring says to such placeholder pieces (``placeholders``), a
    made-up history (``made_up``: it passes train's statistics; the wired placeholders for a run as short as the
    replay's, which then matches), honest bookkeeping with no learning
    (``bookkeeping``: ε-greedy on Q = 0 with the rewards summed, train sampling and monitoring without an update).
    ``replaced``: the reference, with only these functions (module -> code) replaced."""
    import ast

    folder.mkdir(parents=True)
    hw = homeworks.load(HW)
    for module in hw.modules:
        source = (hw.homework_dir / f"{module}.py").read_text(encoding="utf-8")
        names = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name[0] != "_"]
        if replaced is not None:
            source, extra = (hw.solutions_dir / f"{module}.py").read_text(encoding="utf-8"), replaced.get(module, "")
        elif how in SHAPED:
            source = (hw.solutions_dir / f"{module}.py").read_text(encoding="utf-8")
            value, kept = SHAPED[how]
            extra = DOES_NOTHING + "".join(DOING.get(n, {}).get(how, "") for n in names if n in kept)  # first: they
            # may keep the reference's pieces under names of their own
            extra += "".join(f"\n{n} = _does_nothing({n}, {value})\n" for n in names if n not in kept)
        elif how == "raise":
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


# An answer of the right shape and type for any input: the reference's, every number in it replaced by one value
# (the call is the reference's, whatever it does; ``tables`` of train, which it fills, is not passed on)
DOES_NOTHING = """

import functools as _functools


def _same_shape(x, value):
    if isinstance(x, dict):
        return {k: _same_shape(v, value) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_same_shape(v, value) for v in x)
    if isinstance(x, np.ndarray):
        return np.full_like(x, value)
    if isinstance(x, (bool, np.bool_)):
        return x
    if isinstance(x, (int, np.integer)):
        return int(value)
    if isinstance(x, (float, np.floating)):
        return float(value)
    return x


def _does_nothing(f, value):
    @_functools.wraps(f)
    def placeholder(*args, **kwargs):
        kwargs.pop("tables", None)
        return _same_shape(f(*args, **kwargs), value)
    return placeholder

"""
# train's history made up to pass its statistical checks: the score climbs from 0.2 to 0.95, KL and value_loss stay
# small, every argument and the seed change it, the same arguments give the same history
MADE_UP = """

def train(n_updates=40, seed=0, batch_size=64, algo="ppo", beta=0.02, gamma=1.0, lam=0.95, lr=0.05, n_epochs=4,
          n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01, group_size=8, vapo_alpha=None, log_every=5, tables=None):
    noise = np.random.default_rng([seed, int(1e6 * (beta + gamma + lam + lr + eps + c_v + c_e)), n_epochs,
                                   n_minibatches, batch_size, len(algo)])
    history = []
    for update in range(1, n_updates + 1):
        done = update / n_updates
        history.append({"update": update, "score": 0.2 + 0.75 * min(1.0, 2 * done) + 0.01 * noise.random(),
                        "kl_ref": 0.0 if update == 1 else done, "entropy": 1.2 - 0.3 * done,
                        "clipfrac": 0.05 + 0.01 * noise.random(), "approx_kl": 0.01 * noise.random(),
                        "value_loss": 0.1 * (1 - done) + 0.001, "n_answers": update * batch_size})
    return history
"""
# honest bookkeeping with no learning: ε-greedy on a Q that stays 0, the rewards of each episode summed; train
# sampling and monitoring each batch with the reference's own pieces, never updating the policy
BOOKKEEPING = {
    "epsilon_greedy": """

def epsilon_greedy(q_values, epsilon, rng):
    return int(rng.integers(len(q_values)))
""",
    "q_learning": """

def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    returns = np.zeros(n_episodes)
    for episode in range(n_episodes):
        s, _ = env.reset(seed=seed) if episode == 0 else env.reset()
        done = False
        while not done:
            s, r, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
            returns[episode] += r
            done = terminated or truncated
    return Q, returns
""",
    "train": """

_sample_answers, _kl_and_entropy = sample_answers, kl_and_entropy


def train(n_updates=40, seed=0, batch_size=64, algo="ppo", beta=0.02, gamma=1.0, lam=0.95, lr=0.05, n_epochs=4,
          n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01, group_size=8, vapo_alpha=None, log_every=5, tables=None):
    rng = np.random.default_rng(seed)
    ref = toy_lm.reference_theta()
    theta, w, history = ref.copy(), np.zeros(ref.shape[:3]), []
    for update in range(1, n_updates + 1):
        prompts = (np.repeat(rng.integers(toy_lm.N_PROMPTS, size=batch_size // group_size), group_size)
                   if algo == "grpo" else rng.integers(toy_lm.N_PROMPTS, size=batch_size))
        batch = _sample_answers(theta, w, ref, prompts, rng)
        states = (prompts[:, None], np.arange(batch["mask"].shape[1])[None, :], batch["prev"])
        kl_ref, entropy = _kl_and_entropy(theta[states], ref[states], batch["mask"])
        history.append({"update": update, "score": float(toy_lm.score_batch(prompts, batch["tokens"]).mean()),
                        "kl_ref": kl_ref, "entropy": entropy, "clipfrac": 0.0, "approx_kl": 0.0, "value_loss": 0.0,
                        "n_answers": update * len(prompts)})
    return history
""",
}
BOOKKEEPING["sarsa"] = BOOKKEEPING["q_learning"].replace("def q_learning(", "def sarsa(")
# the attack on train: placeholder pieces wired as the docstring says for a short run (the replay of 3
# updates then matches), a made-up history for the long runs the statistics judge
WIRED_THEN_MADE_UP = MADE_UP.replace("def train(", "def _made_up(") + """

_wired = train


def train(*args, **kwargs):
    return (_wired if kwargs.get("n_updates", args[0] if args else 40) <= 3 else _made_up)(*args, **kwargs)
"""
DOING = {"train": {"placeholders": "", "made_up": WIRED_THEN_MADE_UP, "bookkeeping": BOOKKEEPING["train"]},
         **{n: {"bookkeeping": BOOKKEEPING[n]} for n in ("epsilon_greedy", "q_learning", "sarsa")}}
# how -> (the value of every number of every answer, the functions kept out of that: the reference's, or DOING's)
SHAPED = {"zeros": (0, ()), "constant": (1, ()), "placeholders": (0, ("train",)), "made_up": (0, ("train",)),
          "bookkeeping": (0, ("train", "epsilon_greedy", "q_learning", "sarsa"))}


# the parts each kind of doing nothing is graded on: every part for an answer of any function; where a kind does
# something of its own (control's agents, train), that part (``resets`` leaves the other modules the untouched stubs,
# which test_reference_and_stubs grades for the record: score 0)
EVERY_PART = [p.id for p in homeworks.load(HW).parts]
PARTS = {"raise": EVERY_PART, "echo": EVERY_PART, "zeroing": EVERY_PART, "resets": ["control"], "zeros": EVERY_PART,
         "constant": EVERY_PART, "placeholders": ["boss"], "made_up": ["boss"], "bookkeeping": ["control", "boss"]}


@pytest.mark.parametrize("how", list(PARTS))
def test_code_that_does_nothing_earns_nothing(tmp_path, how):
    """One submission per kind of doing nothing, every function at once, graded for the record (hidden inputs too):
    it scores 0, bonus included. A property's hidden twin, a statistic, bookkeeping, a comparison of a function with
    itself or a replay of placeholder pieces opens no function's gate (grader.grading.runner.gated)."""
    _doing_nothing(tmp_path / "student", how)
    out = tmp_path / "results.json"
    proc = run_check(HW, *PARTS[how], "--dir", str(tmp_path / "student"), "--json", str(out), *SHORT.get(how, ()))
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["score"] == 0, [t["extra_data"]["check"] for t in data["tests"] if t["status"] == "passed"]
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr


# A shorter time limit where doing nothing runs long (an episode of the cliff that random actions take about 7000
# steps to end, a constant action that never ends one): it costs the same checks, sooner; the reference's checks of
# control each take a fifth of a second of CPU at most (a check makes many)
SHORT = {how: ("--timeout", "2") for how in SHAPED}
GRPO = "train(algo='grpo')"
MADE_UP_GRPO = MADE_UP.replace("def train(", "def _made_up(") + """

_train = train


def train(*args, algo="ppo", **kwargs):
    return (_made_up if algo == "grpo" else _train)(*args, algo=algo, **kwargs)
"""
# the reference with one function replaced by doing nothing: the part graded, and the gate whose checks must all fail
REPLACED = {"q_learning": ("control", BOOKKEEPING["q_learning"], "q_learning"),
            "sarsa": ("control", BOOKKEEPING["sarsa"], "sarsa"),
            "train": ("boss", MADE_UP, "train"),
            "train_grpo": ("boss", MADE_UP_GRPO, GRPO)}


@pytest.fixture(scope="module")
def gates(tmp_path_factory) -> dict[str, list[str]]:
    """Each check of the graded suites (part::name) -> its gates, as the grade collects them."""
    return {f"{item['part']}::{item['name']}": item["gates"]
            for item in collected(tmp_path_factory.mktemp("collected"))}


@pytest.mark.parametrize("function", list(REPLACED))
def test_the_reference_with_one_function_doing_nothing_earns_nothing_for_it(tmp_path, function, gates):
    """The reference with q_learning or sarsa keeping honest books without learning, or train (or only its GRPO)
    making up its history: every check of that function (or behaviour) fails, bonus included, and every other check
    of the part passes (a gate is that function's only)."""
    part, code, gate = REPLACED[function]
    module = homeworks.load(HW).part(part).module
    if gate == "train":  # both of train's behaviours made up: GRPO's gate closes too
        gate_of = lambda names: {"train", GRPO} & set(names)  # noqa: E731
    else:
        gate_of = lambda names: gate in names  # noqa: E731
    _doing_nothing(tmp_path / "student", "", replaced={module: code})
    out = tmp_path / "results.json"
    # the part's own limits: with a shorter one the part's CPU budget (2 × the limit) is spent by the function doing
    # nothing before the checks on hidden inputs, which come last, and every gate of the part stays closed
    proc = run_check(HW, part, "--dir", str(tmp_path / "student"), "--json", str(out))
    data = json.loads(out.read_text(encoding="utf-8"))
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    tests = {f"{t['extra_data']['part']}::{t['extra_data']['check']}": t for t in data["tests"]}
    own = {name for name in tests if gate_of(gates[name])}
    assert own and sum(tests[name]["score"] for name in own) == 0, \
        [name for name in own if tests[name]["status"] == "passed"]
    assert all(tests[name]["status"] == "passed" for name in set(tests) - own), \
        [name for name in set(tests) - own if tests[name]["status"] != "passed"]


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
