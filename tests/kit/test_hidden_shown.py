"""Nothing hidden shown early (#36, item 2): what a student reads of the grade holds nothing of a hidden input.

- The checks on hidden inputs (hidden twins, checks run only in the grade, ``behaviour=True`` checks:
grader.grading.hidden)
  of a checking process run after all its public ones, in workers of their own: with Linux namespaces forked by a
  zygote of their own (another /tmp, other scratch folders, another PID namespace), without them run as the lease's
  hidden twin, under umask 077, refused chmod, umask, symbolic links and extended attributes.
- Without ``--show-hidden`` a failure on hidden inputs keeps its verdict and the typical mistake its check named,
  never its inputs, its expected values or the student's text (grader.grading.runner.withheld); on Gradescope it is
  shown no sooner than ``--hidden-inputs-visibility``, by a field set from the collection's marks.
- The whole: a submission (the reference's ppo and control, each function wrapped) records every input it is given,
  in its module's globals, in /tmp and in its scratch folder (file contents and file names), and from its second
  call on raises, as its exception's message, the numbers it finds there. The checking process notes every input it
  sends (tests/kit/inputs_recorder.py, a pytest plugin the grader's checking process loads by PYTEST_PLUGINS), each
  marked public or hidden by the check it belongs to. The grade (hidden inputs, the kit's default secret) then shows
  no element of a hidden input in the scoreboard (check.py), the visible part of results.json (set_visibility, as
  grader.gradescope.grade calls it), the --feedback files or the class report (--batch ... --report): a number there
  counts when it is written to 4 or more significant digits and is some hidden input's element rounded so, and no
  public input's (nor a number the part's test file writes: a check's title). In both confinements.
"""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader.base.homeworks import ROOT
from grader.boundary import confine
from grader.reporting import export
from kit import HW, MODES, check_env, in_process, mode_env, run_check

PARTS = ["ppo", "control"]


def test_checks_on_hidden_inputs_run_after_every_public_check_of_every_part(tmp_path):
    """In one checking process (two parts), no public check runs after a check on hidden inputs; the results keep
    the test files' order, where each twin follows its public case."""
    from grader.grading.runner import PYTEST_FLAGS

    events = tmp_path / "events.jsonl"
    files = [str(ROOT / "tests" / HW / f"test_{part}.py") for part in PARTS]
    proc = subprocess.run([sys.executable, "-m", "pytest", *files, "--collect-only", "--impl", "solutions",
                           "--results-file", str(events), *PYTEST_FLAGS], cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=300, env=check_env({"HWKIT_INPUTS": "hidden", "PYTHONPATH": str(ROOT),
                                                                  "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}))
    ran = [line.strip() for line in proc.stdout.splitlines() if "::" in line]
    collected = next(json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()
                     if json.loads(line).get("event") == "collected")["items"]
    hidden = {item["nodeid"] for item in collected if item["hidden"]}
    assert hidden and len(ran) == len(collected), proc.stdout[-2000:] + proc.stderr[-2000:]
    first = min(i for i, nodeid in enumerate(ran) if nodeid in hidden)
    assert not [nodeid for nodeid in ran[first:] if nodeid not in hidden], "a public check runs after a hidden one"
    assert {part for part in PARTS if any(f"test_{part}.py" in nodeid for nodeid in ran[:first])} == set(PARTS)
    order = [item["nodeid"] for item in collected]
    assert order != ran and sorted(order) == sorted(ran)
    assert any(order[i] in hidden and order[i + 1] not in hidden for i in range(len(order) - 1))  # the files' order


PROBE = r'''
import os

SEEN = []
WORKER = os.urandom(8).hex()  # which worker answers (a PID namespace of its own numbers its first worker 2 too)


def leave(x):
    """On hidden inputs: remember ``x`` (globals, /tmp, the scratch folder) and try to open it to others."""
    SEEN.append(x)
    out = {"uid": os.getuid(), "worker": WORKER, "wrote": {}, "refused": []}
    for folder in ("/tmp", os.getcwd()):
        path = os.path.join(folder, "hwprobe-" + WORKER)
        try:
            with open(path, "w") as f:
                f.write(repr(x))
        except OSError:
            continue
        out["wrote"][path] = oct(os.stat(path).st_mode & 0o777)
        for name, attempt in [("chmod", lambda: os.chmod(path, 0o644)), ("umask", lambda: os.umask(0)),
                              ("symlink", lambda: os.symlink(repr(x), path + ".link")),
                              ("setxattr", lambda: os.setxattr(path, "user.x", repr(x).encode()))]:
            try:
                attempt()
            except PermissionError:
                out["refused"].append(name)
            except OSError:  # a file system without user attributes, say
                pass
        out["mode after"] = oct(os.stat(path).st_mode & 0o777)
    return out


def find(paths):
    """On public inputs: whatever is left of what a hidden check gave."""
    found = [repr(x) for x in SEEN]
    for path in paths:
        try:
            with open(path) as f:
                found.append(f.read())
        except OSError:
            pass
    return {"uid": os.getuid(), "worker": WORKER, "found": found}
'''


@pytest.mark.parametrize("mode", MODES)
def test_a_hidden_check_runs_in_a_worker_that_no_public_check_shares_and_leaves_nothing_others_read(tmp_path, mode):
    """A check on hidden inputs asks a worker of its own: a public check after it (the order grader.grading.plugin no
    longer makes) finds nothing of its input in the worker's globals, in /tmp or in its scratch folder; the hidden
    worker writes under umask 077 and is refused chmod, umask, symbolic links and extended attributes; without
    namespaces it runs as another user."""
    from grader.base import homeworks
    from grader.boundary import zygote
    from grader.boundary.session import Session

    (tmp_path / "ppo.py").write_text(PROBE, encoding="utf-8")
    with in_process(mode):
        session = Session(homeworks.load(HW), tmp_path, 20)
        try:
            session.begin_check("t.py::test_x[hidden-0]", "x", 0, True)
            left = session.module("ppo").leave(0.123456789)
            session.end_check()
            session.begin_check("t.py::test_x[1]", "x", 1)
            found = session.module("ppo").find(list(left["wrote"]))
            session.end_check()
        finally:
            session.close()
            zygote.shutdown()
    assert left["wrote"] and set(left["wrote"].values()) == {"0o600"}, left
    assert {"chmod", "umask", "symlink"} <= set(left["refused"]) and left["mode after"] == "0o600", left
    assert found["worker"] != left["worker"] and found["found"] == [], found
    if mode == "user":
        assert found["uid"] != left["uid"] and left["uid"] == confine.hidden_uid(found["uid"]), (found, left)


def _graded_on_hidden_inputs(show_hidden: bool):
    """ppo's results from a checking process's records: a public case, its failed twin, a failed check run only in
    the grade and a failed ``behaviour=True`` one, their texts holding a hidden input and the student's own words."""
    from grader.base import homeworks
    from grader.base.results import PartResult
    from grader.grading import runner

    hw = homeworks.load(HW)
    part = hw.part("ppo")

    def item(name, **marks):
        return {"nodeid": f"tests/{HW}/test_ppo.py::{name}", "name": name, "title": f"проверка {name}",
                "weight": 1.0, "bonus": False, "subjects": ["gae"], "hidden": False, "twin": "",
                "grade_only": False, **marks}

    def result(name, outcome, kind="", message="", traceback=""):
        return {"event": "result", "nodeid": f"tests/{HW}/test_ppo.py::{name}", "name": name, "outcome": outcome,
                "kind": kind, "message": message, "traceback": traceback, "subject": "gae"}

    items = [item("test_r[0]"), item("test_r[hidden-0]", hidden=True, twin="0"),
             item("test_replay[0]", hidden=True, grade_only=True), item("test_behaviour[0]", hidden=True),
             {**item("test_other"), "subjects": ["td_errors"]}]
    records = [{"event": "collected", "items": items}, result("test_r[0]", "passed"),
               result("test_r[hidden-0]", "failed", "check", "Ожидали:   [0.8127346 1.0923]\nПолучили:  [0 0]"),
               {**result("test_replay[0]", "failed", "check", "Проверяли: gae\nОжидали:   [0.3141593 0.2718282]\n"
                         "Похоже на типичную ошибку: λ и γ перепутаны.", "Вызов: gae([0.5772157, 1.4142136])"),
                "diagnosis": "Похоже на типичную ошибку: λ и γ перепутаны."},  # the check's field, as it printed it
               result("test_behaviour[0]", "failed", "error", "ошибка в вашем коде: RuntimeError: seen 0.6180340"),
               {**result("test_other", "passed"), "subject": "td_errors"}]
    results = {part.id: PartResult(part, inputs="hidden")}
    runner._sort(hw, [(part, None)], results, records, "", False, 0, show_hidden)
    return hw, results[part.id]


DETAIL = ("0.8127346", "0.3141593", "0.5772157", "0.6180340")


def test_a_failure_on_hidden_inputs_keeps_its_verdict_and_mistake_but_not_its_detail():
    """Without --show-hidden, a failed check on hidden inputs (a twin, a check run only in the grade, a behaviour=True
    check) is shown with its verdict and the typical mistake its check named, never with its inputs, its expected
    values or the student's text: not in the scoreboard, not in results.json. On Gradescope such a failure is shown
    no sooner than --hidden-inputs-visibility (a field set from the collection's marks, never read from the text)."""
    from grader.reporting.feedback import scoreboard

    hw, r = _graded_on_hidden_inputs(show_hidden=False)
    by_name = {c.name: c for c in r.checks}
    replay, behaviour = by_name["test_replay[0]"], by_name["test_behaviour[0]"]
    assert not replay.passed and replay.kind == "check" and not behaviour.passed and behaviour.kind == "error"
    assert "Похоже на типичную ошибку: λ и γ перепутаны." in replay.message  # the kit's word stays
    assert replay.traceback == "" and not by_name["test_r[0]"].passed
    board = scoreboard(hw, [r], "работа", "python homework/check.py " + HW, verbose=True, first_run=False)
    data = export.gradescope([r], 1.0)
    text = board + json.dumps(data, ensure_ascii=False)
    assert not [number for number in DETAIL if number in text], text
    export.set_visibility(data, [], "visible", "after_published")
    seen = {t["extra_data"]["check"]: t["visibility"] for t in data["tests"]}
    assert seen == {"test_r[0]": "after_published", "test_replay[0]": "after_published",
                    "test_behaviour[0]": "after_published", "test_other": "visible"}, seen
    assert [t["extra_data"]["hidden_inputs"] for t in data["tests"]] == [True, True, True, False]
    hw, r = _graded_on_hidden_inputs(show_hidden=True)  # the instructor's --show-hidden tells it all
    text = "\n".join(c.message + c.traceback for c in r.checks)
    assert all(number in text for number in DETAIL), text


def test_show_hidden_reaches_the_grading_of_a_batch(tmp_path, monkeypatch):
    """``--batch ... --show-hidden``: the feedback and the report tell the detail too (the batch grades with it)."""
    from grader import batch, cli
    from grader.base.results import PartResult

    asked = []

    def run_parts(hw, parts, impl, timeout=None, **options):
        asked.append(options.get("show_hidden", False))
        return [PartResult(part) for part, _ in parts]

    monkeypatch.setattr(batch, "run_parts", run_parts)
    (tmp_path / "class" / "anna").mkdir(parents=True)
    (tmp_path / "class" / "anna" / "ppo.py").write_text("x = 1\n", encoding="utf-8")
    for flags in ([], ["--show-hidden"]):
        cli.main([HW, "ppo", "--batch", str(tmp_path / "class"), "--csv", str(tmp_path / "scores.csv"), *flags])
    assert asked == [False, True]


def test_without_namespaces_the_parts_of_a_submission_share_one_checking_process(monkeypatch):
    """Without namespaces the processes of one submission share /tmp and /proc, their users' file names and command
    lines included: its parts are graded in one checking process, where no hidden check runs before a public one
    (with namespaces each checking process has its own, and the parts are graded side by side)."""
    import contextlib

    from grader import cli
    from grader.base.results import PartResult

    groups = {}
    now = ["namespaces"]

    def run_parts(hw, selected, impl, timeout=None, **options):
        groups.setdefault(now[0], []).append(sorted(part.id for part, _ in selected))
        return [PartResult(part) for part, _ in selected]

    monkeypatch.setattr(cli, "run_parts", run_parts)
    monkeypatch.setattr(confine, "lease", lambda uid=None: contextlib.nullcontext(uid))
    monkeypatch.setattr(confine, "mode", lambda: now[0])
    for now[0] in ("namespaces", "user"):
        cli.main([HW, "ppo", "control", "--solutions", "--jobs", "2"])
    assert sorted(groups["namespaces"]) == [["control"], ["ppo"]] and groups["user"] == [["control", "ppo"]], groups
# ---- the whole: a submission that records every input it sees and says it later ------------------------------

# appended to a reference module: every public function records what it is given and, once anything is recorded,
# raises it (the numbers of its last call first, then those in /tmp and in the scratch folder)
RECORDER = r'''

import functools as _functools
import os as _os

import numpy as _np

_SEEN = []  # the numbers each earlier call was given, in order
_DEPTH = [0]  # > 0 inside a call: the reference calling its own functions is not a new call


def _leaves(value, out, depth=0):
    if depth > 6 or len(out) > 5000 or value is None or isinstance(value, (bool, str, bytes)):
        return out
    if isinstance(value, (int, float, _np.integer, _np.floating)):
        out.append(float(value))
    elif isinstance(value, _np.ndarray) and value.dtype.kind in "iuf":
        out.extend(value.astype(float).ravel().tolist())
    elif isinstance(value, (list, tuple)):
        for item in value:
            _leaves(item, out, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _leaves(item, out, depth + 1)
    elif isinstance(value, _np.random.Generator):
        _leaves(value.bit_generator.state, out, depth + 1)
    elif hasattr(value, "__dict__"):
        _leaves(vars(value), out, depth + 1)
    return out


def _numbers(text):
    found = []
    for word in text.replace("_", " ").split():
        try:
            found.append(float(word))
        except ValueError:
            pass
    return found


def _recall():
    found = list(_SEEN[-1]) if _SEEN else []
    for folder in ("/tmp", _os.getcwd()):
        try:
            names = sorted(_os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if not name.startswith("hwleak"):
                continue
            found += _numbers(name)
            try:
                with open(_os.path.join(folder, name), encoding="utf-8") as f:
                    found += _numbers(f.read())
            except OSError:
                pass
    return found


def _remember(values):
    _SEEN.append(values)
    for folder in ("/tmp", _os.getcwd()):
        try:
            with open(_os.path.join(folder, "hwleak-%d-%d.txt" % (_os.getpid(), len(_SEEN))), "w") as f:
                f.write(" ".join(repr(v) for v in values[:2000]))
        except OSError:
            pass
        try:
            open(_os.path.join(folder, "hwleak_" + "_".join(format(v, ".7g") for v in values[:8])), "w").close()
        except OSError:
            pass


def _wrap(function):
    @_functools.wraps(function)
    def recording(*args, **kwargs):
        if _DEPTH[0]:
            return function(*args, **kwargs)
        earlier = _recall()
        _remember(_leaves([list(args), kwargs], []))
        if earlier:  # the numbers that tell most first: not round, or large (a seed)
            earlier.sort(key=lambda v: round(v, 3) == v and abs(v) < 1000)
            raise RuntimeError("seen " + " ".join(format(v, ".7g") for v in earlier[:40]))
        _DEPTH[0] += 1
        try:
            return function(*args, **kwargs)
        finally:
            _DEPTH[0] -= 1
    return recording


for _name in @NAMES@:
    globals()[_name] = _wrap(globals()[_name])
'''


def _submission(folder: Path) -> None:
    folder.mkdir(parents=True)
    for part in PARTS:
        source = (ROOT / "solutions" / HW / f"{part}.py").read_text(encoding="utf-8")
        names = [node.name for node in ast.parse(source).body
                 if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")]
        (folder / f"{part}.py").write_text(source + RECORDER.replace("@NAMES@", repr(names)), encoding="utf-8")


# ---- what counts as an element of a hidden input in a text ----------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])[-−]?(\d+(?:\.\d*)?|\.\d+)(?:[eE]([-+]?\d+))?")


def _digits(mantissa: str) -> int:
    """The significant digits a number is written with (``0.01230``: 4; ``1300``: 4)."""
    return len(mantissa.replace(".", "").lstrip("0"))


def _written(values: list[float]) -> set[tuple[int, float]]:
    """Each value as written to 4 … 17 significant digits: (digits, the number so written)."""
    out = set()
    for v in values:
        v = abs(v)
        for k in range(4, 18):
            out.add((k, float(f"{v:.{k}g}")))
    return out


def leaks(text: str, hidden: set, public: set) -> list[str]:
    """The numbers of ``text`` written to 4 or more significant digits that are an element of a hidden input so
    rounded, and of no public input."""
    found = []
    for match in _NUMBER.finditer(text):
        k = _digits(match.group(1))
        if k < 4:
            continue
        value = abs(float(match.group(1) + (f"e{match.group(2)}" if match.group(2) else "")))
        key = (min(k, 17), float(f"{value:.{min(k, 17)}g}"))
        if key in hidden and key not in public:
            found.append(match.group(0))
    return found


def _leaks_are_found() -> None:
    """The rule finds a hidden element written to 4 digits or more, and nothing else."""
    hidden, public = _written([0.123456789, 123456.0, 7.5]), _written([0.5, 2.25])
    assert leaks("ожидали 0.1235, было 0.123457 и 1.235e+05", hidden, public) == ["0.1235", "0.123457", "1.235e+05"]
    assert leaks("0.123 (3 цифры), 7.5, 7.500 и 0.1230", hidden, public) == ["7.500"]
    assert leaks("2.250 и 0.5000", _written([2.25]), public) == []  # in a public input too


# a check's points and the totals: the kit's own numbers (parts.toml's points over the part's checks), which no code
# of the student's sets; a weight may equal a hidden element to 4 digits by chance (0.4255 = 20/47 of ppo's points did)
KIT_NUMBERS = {"score", "max_score", "points", "bonus_points", "bonus_score", "total", "max"}


def _texts(path: Path) -> list[str]:
    """What a file says: a JSON file's strings and numbers (never its escapes), any other file's text."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".json":
        return [raw]
    out: list[str] = []

    def walk(value):
        if isinstance(value, dict):
            for k, v in value.items():
                out.append(str(k))
                if k not in KIT_NUMBERS or isinstance(v, (dict, list)):
                    walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif value is not None:
            out.append(str(value))

    walk(json.loads(raw))
    return out


def _visible(results: dict) -> list[str]:
    """What students see of results.json on Gradescope now: the summary and the tests shown (set_visibility as
    grader.gradescope.grade calls it, with the defaults)."""
    export.set_visibility(results, [], "visible", "after_published")
    return [results["output"], *(f"{t['name']}\n{t.get('output', '')}" for t in results["tests"]
                                 if t["visibility"] == "visible")]


def _inputs(log: Path) -> tuple[set, set, int]:
    """(the hidden inputs' elements, the public ones', the calls on hidden inputs) as written to 4 … 17 digits; the
    numbers the part's test files write count as public (the checks' titles quote the lesson's worked numbers, and
    a random hidden input may come within 4 digits of one)."""
    hidden, public, n = [], [], 0
    for line in log.read_text(encoding="utf-8").splitlines():
        call = json.loads(line)
        (hidden if call["hidden"] else public).extend(call["values"])
        n += call["hidden"]
    for part in PARTS:
        text = (ROOT / "tests" / HW / f"test_{part}.py").read_text(encoding="utf-8")
        public += [float(m.group(0).replace("−", "-")) for m in _NUMBER.finditer(text)]
    return _written(hidden), _written(public), n


@pytest.mark.slow  # grades two parts twice, in each mode
@pytest.mark.parametrize("mode", MODES)
def test_no_element_of_a_hidden_input_reaches_the_scoreboard_results_feedback_or_class_report(tmp_path, mode):
    _leaks_are_found()
    env = mode_env(mode)
    log = tmp_path / "inputs.jsonl"
    env.update(PYTEST_PLUGINS="inputs_recorder", PYTHONPATH=str(Path(__file__).resolve().parent),
               HWKIT_TEST_INPUTS_LOG=str(log))
    folder = tmp_path / "class"
    _submission(folder / "mallory")
    results = tmp_path / "results.json"
    single = run_check(HW, *PARTS, "--dir", str(folder / "mallory"), "--json", str(results), env_extra=env)
    assert results.is_file(), single.stdout + single.stderr
    batch = run_check(HW, *PARTS, "--batch", str(folder), "--feedback", str(tmp_path / "feedback"),
                      "--report", str(tmp_path / "report"), env_extra=env)
    assert batch.returncode in (0, 1), batch.stdout + batch.stderr
    hidden, public, calls = _inputs(log)
    assert calls and hidden, "no call on hidden inputs was noted: the test proves nothing"
    assert "seen " in single.stdout, "the submission never raised what it had seen: the test proves nothing"

    shown = {"the scoreboard": [single.stdout], "results.json, as students see it now":
             _visible(json.loads(results.read_text(encoding="utf-8")))}
    for path in sorted((tmp_path / "feedback").iterdir()):
        shown[f"feedback/{path.name}"] = _texts(path)
    for path in sorted(p for p in (tmp_path / "report").rglob("*") if p.is_file() and "feedback" not in p.parts):
        shown[f"report/{path.relative_to(tmp_path / 'report')}"] = _texts(path)
    assert len(shown) > 4, sorted(shown)
    found = {where: sorted(set(n for text in texts for n in leaks(text, hidden, public)))
             for where, texts in shown.items()}
    found = {where: numbers[:10] for where, numbers in found.items() if numbers}
    assert not found, f"elements of hidden inputs shown ({mode}): {found}"
