"""The answer key's answers on hidden inputs, recorded once per secret beside it (grader.grading.hidden_answers): a
grade reads them and computes only what no grade of the reference asked; a missing or stale record is the kit's error,
refused by the grade for the record, grader.grading.public_answers --check and grader.gradescope."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from grader import gradescope
from grader.authoring import release
from grader.base import homeworks
from grader.base.homeworks import ROOT
from grader.grading import hidden, hidden_answers, key, kit_digest, public_answers
from kit import run_check

HW = "s6-hw00-rl-foundations"
COMMAND = f"python -m grader.grading.secret {HW} --record"


@pytest.fixture
def hw():
    return homeworks.load(HW)


def _beside(tmp_path, monkeypatch, text: str = hidden.DEFAULT_SECRET, copy: bool = True):
    """A secret ``text`` in a file of its own (HWKIT_SECRET_FILE), with a copy of the checkout's records (made for
    the kit's default secret) beside it; returns the records' folder."""
    secret = tmp_path / "secret"
    secret.write_text(text + "\n", encoding="utf-8")
    monkeypatch.setenv(hidden.SECRET_ENV, str(secret))
    folder = tmp_path / "secret.answers"
    made = ROOT / "tests" / HW / "key" / "secret.answers"
    if copy:
        shutil.copytree(made, folder)
    assert hidden_answers.record_dir(ROOT / "tests" / HW) == folder
    return folder


def _edit(path, change) -> None:
    """Rewrite a record file with ``change(data)`` applied."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_the_records_of_the_checkouts_secret_are_fresh(hw):
    """Else every grade for the record refuses to start: a check or the key changed, record them again."""
    assert hidden_answers.refusal(hw) is None, f"{hidden_answers.refusal(hw)}"


def test_the_copy_holds_no_record_and_the_kit_digest_covers_them(hw):
    folder = hidden_answers.record_dir(hw.tests_dir)
    files = sorted(folder.glob("*.json"))
    assert [p.stem for p in files] == sorted(p.module for p in key.keyed_parts(hw))
    assert set(files) <= set(kit_digest.kit_files(hw))
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        assert release.excluded(rel) and release.key_leaks({rel: path.read_bytes()}) == [rel]


def test_a_record_is_valid_for_one_secret_key_and_checks_version(tmp_path):
    """The key's digest moves with key/*.py only, the checks' version with the test modules and shared/ only."""
    tests_dir = tmp_path / "tests" / "hw"
    for rel in ("key/dp.py", "test_dp.py", "shared/envs.py", "parts.toml", "answers/dp.json"):
        (tests_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (tests_dir / rel).write_text("x = 1\n", encoding="utf-8")
    before = hidden_answers.valid_for(tests_dir)
    for rel, moved in [("key/dp.py", "key"), ("test_dp.py", "checks"), ("shared/envs.py", "checks"),
                       ("parts.toml", None), ("answers/dp.json", None)]:
        (tests_dir / rel).write_text("x = 2\n", encoding="utf-8")
        now = hidden_answers.valid_for(tests_dir)
        assert [f for f in now if now[f] != before[f]] == ([moved] if moved else []), rel
        before = now
    (tests_dir / "key" / "secret").write_text("another term\n", encoding="utf-8")
    assert hidden_answers.valid_for(tests_dir)["secret"] == hidden.fingerprint("another term") != before["secret"]


def test_a_check_on_hidden_inputs_reads_the_record_and_computes_only_what_it_lacks(tmp_path, monkeypatch, hw):
    """The instructor's module made to raise: a recorded call still answers, from the record; a call on inputs no
    grade of the reference made (the student's own run) is computed; a stale record is the kit's error."""
    _beside(tmp_path, monkeypatch, copy=False)
    P = np.full((2, 2, 2), 0.5)
    R = np.array([[1.0, 0.0], [0.0, 2.0]])
    args = (P, R, np.array([1.0, 3.0]), 0.9)
    made = {"dp": [{"function": "oracle_q", "test": "test_x[hidden-0]", "inputs": key.fingerprint([list(args), {}]),
                    "answer": key.encode(np.array([[7.0, 7.0], [7.0, 7.0]])), "hidden": True, "cpu": 0.5}]}
    written = hidden_answers.write(hw, made, [p.module for p in key.keyed_parts(hw)])
    assert json.loads(written[0].read_text(encoding="utf-8"))["key_cpu_s"] == 0.5
    the_key = key.AnswerKey(hw.tests_dir, "dp")
    monkeypatch.setattr(key.AnswerKey, "_instructor", lambda self: type(  # the module read (FROM_THE_RUN), not run
        "Key", (), {"oracle_q": staticmethod(lambda *a: pytest.fail("the key computed a recorded answer"))}))
    monkeypatch.setitem(key.CURRENT, "hidden", True)
    assert np.array_equal(the_key.oracle_q(*args), np.full((2, 2), 7.0))
    computed = []
    monkeypatch.setattr(key.AnswerKey, "_instructor", lambda self: computed.append(1) or type(
        "Key", (), {"oracle_q": staticmethod(lambda *a: "computed")}))
    assert the_key.oracle_q(P, R, np.array([1.0, 4.0]), 0.9) == "computed" and computed == [1]
    _edit(written[0], lambda data: data.update(key="0" * 16))
    hidden_answers._LOADED.clear()
    with pytest.raises(key.MissingAnswer, match=COMMAND):
        key.AnswerKey(hw.tests_dir, "dp").oracle_q(*args)


@pytest.mark.parametrize("field", ["secret", "key", "checks", "missing"])
def test_a_stale_or_missing_record_is_refused_by_answers_check_and_gradescope(tmp_path, monkeypatch, capsys, hw,
                                                                            field):
    """Exit 2 with one line naming the command that records them, before anything is graded or built."""
    folder = _beside(tmp_path, monkeypatch, "another term" if field == "secret" else hidden.DEFAULT_SECRET)
    assert field == "secret" or hidden_answers.refusal(hw) is None  # fresh copies of the checkout's records
    if field == "missing":
        (folder / "ppo.json").unlink()
    elif field != "secret":
        _edit(folder / "ppo.json", lambda data: data.update({field: "0" * 16}))
    monkeypatch.setattr(public_answers, "record", lambda *a: pytest.fail("answers --check ran the reference"))
    assert public_answers.main([HW, "--check"]) == 2
    said = capsys.readouterr().err.strip()
    assert len(said.splitlines()) == 1 and COMMAND in said and "ppo" in said, said
    assert (hidden_answers.MISSING if field == "missing" else hidden_answers.WHAT[field]) in said
    assert gradescope.main([str(tmp_path / "autograder.zip"), HW, "--allow-default-secret"]) == 2
    said = capsys.readouterr().err.strip()
    assert len(said.splitlines()) == 1 and COMMAND in said, said
    assert not (tmp_path / "autograder.zip").exists()


def test_the_grade_for_the_record_refuses_without_records_and_a_selected_check_runs(tmp_path):
    """A secret with no records beside it: the grade of a part refuses to start (exit 2, the command named); a
    check selected by name (no grade for the record) runs, and asks the key nothing on hidden inputs."""
    secret = tmp_path / "secret"
    secret.write_text("a term without records\n", encoding="utf-8")
    env = {hidden.SECRET_ENV: str(secret)}
    proc = run_check(HW, "ppo", "--solutions", env_extra=env)
    assert proc.returncode == 2 and COMMAND in proc.stderr and "не записаны" in proc.stderr, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    proc = run_check(HW, "ppo::test_td_errors_courier", "--solutions", env_extra=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_check(HW, "ppo", "--solutions", "--public", env_extra=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_grade_reads_the_records_and_does_not_recompute_them(tmp_path, monkeypatch):
    """The records beside a secret with every recorded answer of dp moved by 1: the reference, which passes every
    check with the true records, now fails dp's checks on hidden inputs, so the grade took the record's answers
    and never computed its own. (The secret is the default's text: the copied records are fresh for it.)"""
    folder = _beside(tmp_path, monkeypatch)

    def moved(data):
        for e in data["entries"]:
            a = e["answer"]
            if isinstance(a, dict) and a.get("ndarray", "").lstrip("<>=|")[:1] == "f":
                a["data"] = [x + 1.0 for x in a["data"]]
    _edit(folder / "dp.json", moved)
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "homework/check.py", HW, "dp", "--solutions", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, encoding="utf-8", timeout=300,
                          env={**os.environ, hidden.SECRET_ENV: str(tmp_path / "secret")})
    assert out.is_file(), proc.stdout + proc.stderr
    failed = [t["extra_data"] for t in json.loads(out.read_text(encoding="utf-8"))["tests"] if t["status"] != "passed"]
    assert failed and all(c["kind"] == "hidden" for c in failed), failed


def test_a_batch_refuses_to_start_without_records(tmp_path, monkeypatch, hw):
    """A class is graded only with the key's hidden answers recorded: every submission reads them, none computes."""
    from grader import batch

    _beside(tmp_path, monkeypatch, "a term without records", copy=False)
    (tmp_path / "class" / "alice").mkdir(parents=True)
    monkeypatch.setattr(batch, "grade_submission", lambda *a, **k: pytest.fail("graded without records"))
    with pytest.raises(homeworks.UsageError, match=COMMAND):
        batch.run(hw, [(p, None) for p in hw.parts], tmp_path / "class", allow_unconfined=True)


def test_a_key_call_on_the_students_own_run_is_computed_never_looked_up_or_recorded(tmp_path, monkeypatch):
    """A key module's FROM_THE_RUN names the calls whose inputs are the student's own run (its episodes): on hidden
    inputs they are computed at once, never fingerprinted, looked up among the records or recorded; the key's other
    calls are recorded as before (and a run they were not recorded for would be a kit error, not a recompute)."""
    tests_dir = tmp_path / "tests" / "hw-x"
    (tests_dir / "key").mkdir(parents=True)
    (tests_dir / "key" / "part.py").write_text(
        "FROM_THE_RUN = ('episode_sums',)\n"
        "def episode_sums(episodes):\n    return [sum(e) for e in episodes]\n"
        "def oracle(x):\n    return 2 * x\n", encoding="utf-8")
    recording: dict = {}
    monkeypatch.setattr(key, "RECORDING", recording)
    monkeypatch.setitem(key.CURRENT, "hidden", True)
    monkeypatch.setitem(key.CURRENT, "test", "test_run")
    answer_key = key.AnswerKey(tests_dir, "part")
    monkeypatch.setattr(key, "fingerprint", lambda *a, **k: pytest.fail("FROM_THE_RUN's inputs were fingerprinted"))
    assert answer_key.episode_sums([[1, 2], [3]]) == [3, 3]
    assert recording == {}
    monkeypatch.undo()
    monkeypatch.setattr(key, "RECORDING", recording)
    monkeypatch.setitem(key.CURRENT, "hidden", True)
    assert answer_key.oracle(3) == 6
    assert [e["function"] for e in recording["part"]] == ["oracle"]
