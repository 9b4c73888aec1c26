"""Nothing hidden shown early (#36, item 2): what a student reads of the grade holds nothing of a hidden input.

- The checks on hidden inputs (hidden twins, checks run only in the grade, ``behaviour=True`` checks: grader.hidden)
  of a checking process run after all its public ones, in workers of their own: with Linux namespaces forked by a
  zygote of their own (another /tmp, other scratch folders, another PID namespace), without them run as the lease's
  hidden twin, under umask 077, refused chmod, umask, symbolic links and extended attributes.
- Without ``--show-hidden`` a failure on hidden inputs keeps its verdict and the typical mistake its check named,
  never its inputs, its expected values or the student's text (grader.runner.withheld); on Gradescope it is shown no
  sooner than ``--hidden-inputs-visibility``, by a field set from the collection's marks.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from grader import export
from grader.boundary import confine
from grader.homeworks import ROOT
from kit import HW, MODES, check_env, mode_env

PARTS = ["ppo", "control"]


def test_checks_on_hidden_inputs_run_after_every_public_check_of_every_part(tmp_path):
    """In one checking process (two parts), no public check runs after a check on hidden inputs; the results keep
    the test files' order, where each twin follows its public case."""
    from grader.runner import PYTEST_FLAGS

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
    """A check on hidden inputs asks a worker of its own: a public check after it (the order grader.plugin no longer
    makes) finds nothing of its input in the worker's globals, in /tmp or in its scratch folder; the hidden worker
    writes under umask 077 and is refused chmod, umask, symbolic links and extended attributes; without namespaces
    it runs as another user."""
    from grader import homeworks
    from grader.boundary import zygote
    from grader.boundary.session import Session

    env = mode_env(mode)
    (tmp_path / "ppo.py").write_text(PROBE, encoding="utf-8")
    before = dict(os.environ)
    os.environ.update(env)
    try:
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
    finally:
        os.environ.clear()
        os.environ.update(before)
    assert left["wrote"] and set(left["wrote"].values()) == {"0o600"}, left
    assert {"chmod", "umask", "symlink"} <= set(left["refused"]) and left["mode after"] == "0o600", left
    assert found["worker"] != left["worker"] and found["found"] == [], found
    if mode == "user":
        assert found["uid"] != left["uid"] and left["uid"] == confine.hidden_uid(found["uid"]), (found, left)


def _graded_on_hidden_inputs(show_hidden: bool):
    """ppo's results from a checking process's records: a public case, its failed twin, a failed check run only in
    the grade and a failed ``behaviour=True`` one, their texts holding a hidden input and the student's own words."""
    from grader import homeworks, runner
    from grader.results import PartResult

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
               result("test_replay[0]", "failed", "check", "Проверяли: gae\nОжидали:   [0.3141593 0.2718282]\n"
                      "Похоже на типичную ошибку: λ и γ перепутаны.", "Вызов: gae([0.5772157, 1.4142136])"),
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
    from grader.report import scoreboard

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
    from grader.results import PartResult

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
    from grader.results import PartResult

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
