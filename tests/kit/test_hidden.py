"""Hidden inputs (#26): a public check counts only when its function works on inputs the student's copy never held;
the grade for the record refuses the kit's default secret; the answer key records are found again by their inputs.

The rules are pure functions here (grader.grading.runner.gated, grader.grading.key); the attacks on a whole release are
in tests/kit/test_answer_key.py.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from grader.base.homeworks import ROOT
from grader.grading import hidden, key
from grader.grading.runner import check_results
from kit import run_check

HW = "s6-hw00-rl-foundations"


def item(name: str, subject: str = "f", twin: str = "", hidden_: bool = False, oracle: bool = False,
         gate: str = "", replays: tuple[str, ...] = ()) -> dict:
    """A collected check, as the plugin describes it (grader.grading.plugin._meta); twins are oracle checks unless
    told."""
    return {"nodeid": f"t.py::{name}", "name": name, "title": f"проверка {name}", "weight": 1.0, "bonus": False,
            "subjects": [subject], "hidden": hidden_ or bool(twin), "twin": twin, "oracle": oracle or bool(twin),
            "gates": [gate or subject], "replays": list(replays)}


def result(name: str, outcome: str, message: str = "", diagnosis: str = "") -> dict:
    return {"event": "result", "nodeid": f"t.py::{name}", "name": name, "outcome": outcome,
            "kind": "" if outcome == "passed" else "check", "message": message, "traceback": "",
            "diagnosis": diagnosis}


def graded(items, outcomes, show_hidden=False):
    records = [{"event": "collected", "items": items}, *(result(*outcome) for outcome in outcomes)]
    return {c.name: c for c in check_results(records, show_hidden=show_hidden)}


def test_a_public_check_counts_only_with_its_hidden_twin():
    items = [item("test_r[0]"), item("test_r[hidden-0]", twin="0"), item("test_r[1]"),
             item("test_r[hidden-1]", twin="1")]
    got = graded(items, [("test_r[0]", "passed", ""),
                         ("test_r[hidden-0]", "failed", "Похоже на типичную ошибку: x", "Похоже на типичную ошибку: x"),
                         ("test_r[1]", "passed", ""), ("test_r[hidden-1]", "passed", "")])
    assert set(got) == {"test_r[0]", "test_r[1]"}  # the twins carry no points of their own
    assert got["test_r[1]"].passed
    lost = got["test_r[0]"]
    assert not lost.passed and lost.kind == "hidden"
    assert "Открытые случаи пройдены" in lost.message and "--show-hidden" in lost.message
    assert "Похоже на типичную ошибку: x" in lost.message  # a diagnosis made on the hidden input itself
    assert lost.diagnosis == "Похоже на типичную ошибку: x"  # the twin's field, carried over


def test_show_hidden_tells_the_hidden_failure_and_which_check_reruns_it():
    items = [item("test_r[0]"), item("test_r[hidden-0]", twin="0")]
    got = graded(items, [("test_r[0]", "passed", ""), ("test_r[hidden-0]", "failed", "ожидалось 1, получено 2")],
                 show_hidden=True)
    assert "test_r[hidden-0]" in got["test_r[0]"].message and "ожидалось 1, получено 2" in got["test_r[0]"].message


def test_a_check_without_a_twin_counts_when_its_function_passes_a_hidden_oracle_check():
    items = [item("test_lesson", "f"), item("test_other", "g"), item("test_r[0]", "f"),
             item("test_r[hidden-0]", "f", twin="0"), item("test_s[0]", "f"), item("test_s[hidden-0]", "f", twin="0")]
    one_passes = graded(items, [("test_lesson", "passed", ""), ("test_other", "passed", ""),
                                ("test_r[0]", "passed", ""), ("test_r[hidden-0]", "failed", ""),
                                ("test_s[0]", "passed", ""), ("test_s[hidden-0]", "passed", "")])
    assert one_passes["test_lesson"].passed  # one missed hidden case costs that check, not the function
    assert not one_passes["test_r[0]"].passed and one_passes["test_s[0]"].passed
    # g has no oracle check on hidden inputs at all: in a grade for the record nothing of it counts
    assert not one_passes["test_other"].passed and "g проходит хотя бы одну" not in one_passes["test_other"].message
    assert "g не проходит ни одной проверки на скрытых входах" in one_passes["test_other"].message
    none_passes = graded(items, [("test_lesson", "passed", ""), ("test_r[0]", "passed", ""),
                                 ("test_r[hidden-0]", "failed", ""), ("test_s[0]", "passed", ""),
                                 ("test_s[hidden-0]", "failed", "")])
    assert not any(c.passed for c in none_passes.values() if c.subjects == ["f"])  # a lookup table scores nothing
    assert "не проходит ни одной проверки на скрытых входах" in none_passes["test_lesson"].message


def test_a_run_of_selected_checks_gates_only_what_it_ran_an_oracle_check_of():
    items = [item("test_lesson", "f"), item("test_other", "g"), item("test_s[0]", "f"),
             item("test_s[hidden-0]", "f", twin="0")]
    records = [{"event": "part-checks", "file": "t.py", "items": items}, {"event": "collected", "items": items},
               *(result(n, "passed") for n in ("test_lesson", "test_other", "test_s[0]")),
               result("test_s[hidden-0]", "failed")]
    got = {c.name: c.passed for c in check_results(records)}
    assert got == {"test_lesson": False, "test_other": True, "test_s[0]": False}


def test_only_an_oracle_check_opens_a_gate():
    """A property's twin (the changed Q entries were visited: Q = 0 passes it), a statistical check on hidden seeds,
    a comparison of the function with itself: passed on hidden inputs, they open nothing; an oracle check does."""
    items = [item("test_lesson", "f"), item("test_prop[0]", "f"), {**item("test_prop[hidden-0]", "f", twin="0"),
                                                                     "oracle": False},
             item("test_cliff[0]", "f", hidden_=True), item("test_self[0]", "f"),
             {**item("test_self[hidden-0]", "f", twin="0"), "oracle": False}]
    passing = [(c["name"], "passed", "") for c in items]
    got = graded(items, passing)
    assert not any(c.passed for c in got.values()), {n: c.message for n, c in got.items()}
    assert got["test_cliff[0]"].kind == "hidden" and "f проходит хотя бы одну" in got["test_cliff[0]"].message
    opened = graded([*items, item("test_exact[0]", "f"), item("test_exact[hidden-0]", "f", twin="0")],
                    [*passing, ("test_exact[0]", "passed", ""), ("test_exact[hidden-0]", "passed", "")])
    assert all(c.passed for c in opened.values())
    grade_only = graded([*items, item("test_replay", "f", hidden_=True, oracle=True)],
                        [*passing, ("test_replay", "passed", "")])  # an oracle check run only in the grade
    assert all(c.passed for c in grade_only.values())


def test_a_replay_counts_and_opens_its_gate_only_when_each_piece_passes_its_own_oracle_check():
    """train replayed from the student's own pieces: placeholders wired as the docstring says pass the replay, and
    a made-up history then passes train's statistics; neither counts while a piece fails its own oracle check."""
    pieces = ("sample", "rewards")
    items = [item("test_sample[0]", "sample"), item("test_sample[hidden-0]", "sample", twin="0"),
             item("test_rewards[0]", "rewards"), item("test_rewards[hidden-0]", "rewards", twin="0"),
             item("test_train_replay", "train", hidden_=True, oracle=True, replays=pieces),
             item("test_train_goal", "train", hidden_=True)]
    every = [(c["name"], "passed", "") for c in items]
    assert all(c.passed for c in graded(items, every).values())
    got = graded(items, [(n, "failed" if n == "test_rewards[hidden-0]" else o, m) for n, o, m in every])
    assert not got["test_rewards[0]"].passed and got["test_sample[0]"].passed
    replay, goal = got["test_train_replay"], got["test_train_goal"]
    assert not replay.passed and replay.kind == "hidden" and "не проходят: rewards" in replay.message, replay.message
    assert not goal.passed and "train" in goal.message  # the replay did not open train's gate
    chained = graded([*items, item("test_loop", "loop", hidden_=True, oracle=True, replays=("train",))],
                     [*every, ("test_loop", "passed", "")])  # a replay of a replayed function: opened in turn
    assert chained["test_loop"].passed


def test_one_behaviour_of_a_function_has_a_gate_of_its_own():
    """train's GRPO (algo='grpo') works or not on its own: its replay opens its checks, not PPO's, and the other way
    round."""
    grpo = "train(algo='grpo')"
    items = [item("test_train_replay", "train", hidden_=True, oracle=True), item("test_train_goal", "train"),
             item("test_grpo_replay", "train", hidden_=True, oracle=True, gate=grpo),
             item("test_grpo_goal", "train", gate=grpo)]
    got = graded(items, [("test_train_replay", "failed", ""), ("test_train_goal", "passed", ""),
                         ("test_grpo_replay", "passed", ""), ("test_grpo_goal", "passed", "")])
    assert {n: c.passed for n, c in got.items()} == {"test_train_replay": False, "test_train_goal": False,
                                                     "test_grpo_replay": True, "test_grpo_goal": True}
    got = graded(items, [("test_train_replay", "passed", ""), ("test_train_goal", "passed", ""),
                         ("test_grpo_replay", "failed", ""), ("test_grpo_goal", "passed", "")])
    assert {n: c.passed for n, c in got.items()} == {"test_train_replay": True, "test_train_goal": True,
                                                     "test_grpo_replay": False, "test_grpo_goal": False}


def test_a_check_of_two_functions_counts_only_when_both_work_on_hidden_inputs():
    items = [item("test_f[0]", "f"), item("test_f[hidden-0]", "f", twin="0"), item("test_g[0]", "g"),
             item("test_g[hidden-0]", "g", twin="0"), {**item("test_fg", "f"), "subjects": ["f", "g"],
                                                        "gates": ["f", "g"]}]
    both = graded(items, [(c["name"], "passed", "") for c in items])
    assert both["test_fg"].passed
    one = graded(items, [(c["name"], "failed" if c["name"] == "test_g[hidden-0]" else "passed", "") for c in items])
    assert one["test_f[0]"].passed and not one["test_fg"].passed and "g не проходит" in one["test_fg"].message


def test_an_oracle_check_of_two_functions_that_fails_opens_neither_gate():
    items = [item("test_f", "f"), item("test_g", "g"), item("test_fg[0]", "f"),
             {**item("test_fg[hidden-0]", "f", twin="0"), "subjects": ["f", "g"], "gates": ["f", "g"]},
             item("test_g1[0]", "g"), item("test_g1[hidden-0]", "g", twin="0")]
    records = [{"event": "collected", "items": items}, result("test_f", "passed"), result("test_g", "passed"),
               result("test_fg[0]", "passed"), {**result("test_fg[hidden-0]", "failed"), "subject": "g"},
               result("test_g1[0]", "passed"), result("test_g1[hidden-0]", "passed")]
    got = {c.name: c.passed for c in check_results(records)}
    assert got == {"test_f": False, "test_g": True, "test_fg[0]": False, "test_g1[0]": True}


def test_a_check_without_a_verdict_keeps_its_flags_so_the_gate_still_sees_it():
    """The checking process ended before some checks had a verdict (no result record): they fail as what the
    collection says they are, so a hidden twin that never ran still fails its public case, and an oracle check run
    only in the grade that never ran opens nothing for its function's other checks."""
    items = [item("test_r[0]", "f"), item("test_r[hidden-0]", "f", twin="0"), item("test_lesson", "g"),
             item("test_replay", "g", hidden_=True, oracle=True), {**item("test_empty", "h"), "guard": True}]
    items[3]["grade_only"] = True
    records = [{"event": "collected", "items": items}, result("test_r[0]", "passed"), result("test_lesson", "passed")]
    got = {c.name: c for c in check_results(records)}
    assert list(got) == ["test_r[0]", "test_lesson", "test_replay", "test_empty"]  # the twin carries no points
    assert not got["test_r[0]"].passed and got["test_r[0]"].kind == "hidden"
    assert not got["test_lesson"].passed and "ни одной проверки на скрытых входах" in got["test_lesson"].message
    replay, empty = got["test_replay"], got["test_empty"]
    assert not replay.passed and (replay.hidden, replay.grade_only, replay.oracle) == (True, True, True)
    assert not empty.passed and empty.guard and "процесс проверки прервался" in empty.message


def test_a_failed_public_check_keeps_its_own_message():
    items = [item("test_r[0]"), item("test_r[hidden-0]", twin="0")]
    got = graded(items, [("test_r[0]", "failed", "своё сообщение"), ("test_r[hidden-0]", "failed", "другое")])
    assert got["test_r[0]"].message == "своё сообщение"


def test_a_behaviour_check_on_hidden_seeds_is_graded_itself_behind_its_gate():
    items = [item("test_cliff[0]", hidden_=True), item("test_r[0]"), item("test_r[hidden-0]", twin="0")]
    assert graded(items, [("test_cliff[0]", "passed", ""), ("test_r[0]", "passed", ""),
                          ("test_r[hidden-0]", "passed", "")])["test_cliff[0]"].passed
    assert not graded(items, [("test_cliff[0]", "passed", ""), ("test_r[0]", "passed", ""),
                              ("test_r[hidden-0]", "failed", "")])["test_cliff[0]"].passed


def test_hidden_seeds_derive_from_the_secret(tmp_path, monkeypatch):
    tests_dir = ROOT / "tests" / HW
    default = hidden.seed_of(tests_dir, "test_x", "0")
    assert default == hidden.seed_of(tests_dir, "test_x", "0") != hidden.seed_of(tests_dir, "test_x", "1")
    other = tmp_path / "secret"
    other.write_text("another term\n", encoding="utf-8")
    monkeypatch.setenv(hidden.SECRET_ENV, str(other))
    assert hidden.seed_of(tests_dir, "test_x", "0") != default
    assert hidden.fingerprint("another term") not in "another term"


def test_batch_refuses_the_default_secret_unless_told(tmp_path):
    """Whichever secret the checkout holds: the default one is set up here, as the file HWKIT_SECRET_FILE names."""
    (tmp_path / "class" / "alice").mkdir(parents=True)
    default = tmp_path / "secret"
    default.write_text(hidden.DEFAULT_SECRET + "\n", encoding="utf-8")
    proc = run_check(HW, "ppo", "--batch", str(tmp_path / "class"), "--csv", str(tmp_path / "s.csv"),
                     env_extra={"HWKIT_ALLOW_DEFAULT_SECRET": "0", hidden.SECRET_ENV: str(default)})
    assert proc.returncode == 2 and "python -m grader.grading.secret" in proc.stderr, proc.stdout + proc.stderr
    assert not (tmp_path / "s.csv").exists()


def test_the_variants_a_new_secret_is_tried_on_are_the_variant_folders_of_its_homework(tmp_path):
    """``tests/kit/variants/<hw>/<variant>/``: each variant folder, not ``<hw>/`` itself, not a README beside them,
    not another homework's variants."""
    from grader.base import homeworks
    from grader.grading import secret
    hw = homeworks.load(HW)
    assert [v.name for v in secret.variants(hw)] == sorted(
        p.name for p in (ROOT / "tests" / "kit" / "variants" / HW).iterdir() if p.is_dir()) == ["loop_heavy"]
    folder = tmp_path / "tests" / "kit" / "variants"
    for rel in ("README.md", f"{HW}/README.md", f"{HW}/b/dp.py", f"{HW}/a/dp.py", "s6-hw01-other/c/dp.py"):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text("\n", encoding="utf-8")
    assert secret.variants(hw, tmp_path) == [folder / HW / "a", folder / HW / "b"]


@pytest.mark.slow
def test_a_new_secret_is_drawn_tried_on_the_reference_and_variants_and_kept_for_its_owner_only(tmp_path):
    """``python -m grader.grading.secret HW --new`` end to end, writing where HWKIT_SECRET_FILE says (never the
    checkout's tests/<hw>/key/secret): a drawn secret's hidden inputs pass the reference and every variant, so it is
    kept, readable by its owner only (even over a file that was readable by all), and the grader then grades with it."""
    from grader.grading.hidden import DEFAULT_SECRET, SECRET_ENV, fingerprint, secret_path
    from kit import check_env, run_measured

    real = secret_path(ROOT / "tests" / HW)
    before = real.read_bytes() if real.exists() else None
    target = tmp_path / "secret"
    target.write_text("an old term's secret\n", encoding="utf-8")
    os.chmod(target, 0o644)
    env = check_env({SECRET_ENV: str(target)})
    proc, cpu = run_measured([sys.executable, "-m", "grader.grading.secret", HW, "--new"], timeout=900, cwd=str(ROOT),
                             env=env)
    print(f"python -m grader.grading.secret --new: {cpu:.1f} CPU-s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = target.read_text(encoding="utf-8").strip()
    assert text not in ("an old term's secret", DEFAULT_SECRET) and len(text) >= 32
    assert proc.stdout.strip() == f"wrote {target}: secret {fingerprint(text)}"
    assert os.stat(target).st_mode & 0o777 == 0o600
    # the key's answers on its hidden inputs, recorded in the reference's grade of it, kept beside it, fresh
    from grader.base import homeworks
    from grader.grading import hidden_answers
    hw = homeworks.load(HW)
    records = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "secret.answers").glob("*.json")}
    assert sorted(records) == sorted(p.module for p in key.keyed_parts(hw))
    now = {**hidden_answers.valid_for(hw.tests_dir), "secret": fingerprint(text)}
    assert all({f: r[f] for f in now} == now for r in records.values()), [r["secret"] for r in records.values()]
    assert sum(len(r["entries"]) for r in records.values()) > 0
    told = subprocess.run([sys.executable, "-m", "grader.grading.secret", HW], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert told.stdout.strip() == f"secret {fingerprint(text)}", told.stdout + told.stderr
    assert (real.read_bytes() if real.exists() else None) == before, "the checkout's own secret was touched"


@pytest.mark.parametrize("shift", [0.0, 1e-13])
def test_a_record_is_found_by_its_inputs_within_floating_point_noise(shift):
    made = key.fingerprint([[np.linspace(0, 1, 100), 0.9, "first"], {}])
    now = key.fingerprint([[np.linspace(0, 1, 100) + shift, 0.9 + shift, "first"], {}])
    assert key.same(made, now)
    assert not key.same(made, key.fingerprint([[np.linspace(0, 1, 100) + 1e-3, 0.9, "first"], {}]))
    assert not key.same(made, key.fingerprint([[np.linspace(0, 1, 100), 0.9, "second"], {}]))


def test_an_answer_survives_its_record_exactly():
    answer = {"имя ошибки": np.array([[0.1, np.nan], [np.inf, -2.0]]), "пара": (np.int64(3), [1.5, None]),
              "флаги": np.array([True, False])}
    back = key.decode(key.encode(answer))
    assert back.keys() == answer.keys() and back["пара"] == answer["пара"]
    np.testing.assert_array_equal(back["имя ошибки"], answer["имя ошибки"])
    assert back["флаги"].dtype == bool and back["имя ошибки"].dtype == np.float64


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root, to change user")
def test_without_namespaces_a_worker_run_as_a_user_of_its_own_cannot_read_the_answer_key():
    """Without namespaces a grader run as root runs the worker as a uid of the submission's own (grader.boundary.
    confine); the grader keeps the key folder its owner's only (grader.grading.runner.protect_key), so that user cannot
    read an oracle or the secret."""
    from grader.base import homeworks
    from grader.boundary import confine
    from grader.grading.runner import protect_key

    hw = homeworks.load(HW)
    protect_key(hw)
    target = hw.tests_dir / "key" / "ppo.py"
    pid = os.fork()
    if pid == 0:  # the child becomes such a user, as a worker does, and tries
        code = 1
        try:
            confine.become(confine.PROBE_UID)
            try:
                target.read_bytes()
            except PermissionError:
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "a user of its own read the answer key"


def test_every_function_has_an_exact_check_on_hidden_inputs_of_its_own(tmp_path):
    """Only a declared oracle check on hidden inputs (``@graded(..., oracle=True)``: its hidden twin, a check run only
    in the grade, or one run on hidden seeds) opens the gate of a function's checks (grader.grading.runner.gated): every
    function, and every behaviour with a gate of its own (train's GRPO), has one, of that function alone (a check of
    several that fails on one opens none); every graded check counts behind a gate, and every piece a replay
    composes has an oracle check of its own: GRPO's replay of train composes ppo_update's GRPO branch (algo="grpo"),
    which an oracle check of that branch opens, never the PPO update's."""
    from kit import collected

    items = collected(tmp_path)
    assert all(item["gates"] for item in items), [item["name"] for item in items if not item["gates"]]
    oracle = {g for item in items if item["oracle"] and item["hidden"] and len(item["gates"]) == 1
              for g in item["gates"]}
    gates = {g for item in items for g in item["gates"]}
    pieces = {p for item in items for p in item["replays"]}
    assert gates and gates <= oracle, sorted(gates - oracle)
    assert pieces and pieces <= oracle, sorted(pieces - oracle)
    assert "train(algo='grpo')" in gates  # GRPO's checks count behind GRPO's own replay, not PPO's
    grpo_update = "ppo_update(algo='grpo')"
    assert grpo_update in oracle  # the GRPO branch of ppo_update, judged against the key on hidden inputs
    grpo_replays = [item["replays"] for item in items if item["gates"] == ["train(algo='grpo')"] and item["replays"]]
    assert grpo_replays and all(grpo_update in r and "ppo_update" not in r for r in grpo_replays), grpo_replays


def test_gradescope_shows_a_failure_on_hidden_inputs_only_after_publishing_and_rows_name_their_rules():
    from grader.base.homeworks import Part
    from grader.base.results import CheckResult, PartResult
    from grader.reporting import export

    part = Part("p", "часть", "m", "test_m.py", 10)
    checks = [CheckResult("t.py::test_a[0]", "test_a[0]", "а", "failed", "hidden", "Открытые случаи пройдены, но …"),
              CheckResult("t.py::test_b", "test_b", "б", "failed", "check", "ожидалось 1")]
    result = PartResult(part, checks, inputs="hidden", secret="abc123def456", kit="0123456789ab")
    data = export.set_visibility(export.gradescope([result], 1.0), [], "visible")
    assert [t["visibility"] for t in data["tests"]] == ["after_published", "visible"]
    assert data["extra_data"]["secret"] == "abc123def456" and data["extra_data"]["inputs"] == "hidden"
    row = export.csv_row("alice", [result])
    assert (row["inputs"], row["secret"], row["kit"]) == ("hidden", "abc123def456", "0123456789ab")


def test_a_gate_closed_because_its_function_hung_says_so_about_that_function():
    """policy_evaluation hangs on one public edge input: its hidden checks are not run (the function hung), so its
    gate stays closed. What each check it carries says is that the hidden checks never ran, about the function that
    hung (never «подобранный под открытые случаи», a diagnosis of answers the key never saw), and the shared check of
    another function (solve_bellman's bad input, which calls policy_evaluation too) is told under policy_evaluation."""
    items = [item("test_chain", "policy_evaluation"), item("test_zero[0]", "policy_evaluation"),
             {**item("test_bad[0]", "solve_bellman"), "subjects": ["solve_bellman", "policy_evaluation"],
              "gates": ["solve_bellman", "policy_evaluation"]},
             {**item("test_bad[hidden-0]", "solve_bellman", twin="0"), "subjects": ["solve_bellman",
                                                                                    "policy_evaluation"],
              "gates": ["solve_bellman", "policy_evaluation"]},
             item("test_solve[0]", "solve_bellman"), item("test_solve[hidden-0]", "solve_bellman", twin="0"),
             item("test_eval[hidden-0]", "policy_evaluation", twin="0"), item("test_eval[0]", "policy_evaluation")]
    records = [{"event": "collected", "items": items},
               *(result(n, "passed") for n in ("test_chain", "test_bad[0]", "test_solve[0]", "test_solve[hidden-0]",
                                               "test_eval[0]")),
               {**result("test_zero[0]", "failed", "превышено время (5 с)"), "kind": "timeout"},
               *({**result(n, "failed", "не выполнялась: функция зависла"), "kind": "hung",
                  "subject": "policy_evaluation"} for n in ("test_bad[hidden-0]", "test_eval[hidden-0]"))]
    got = {c.name: c for c in check_results(records)}
    assert got["test_solve[0]"].passed  # solve_bellman's own gate is open
    for name in ("test_chain", "test_bad[0]", "test_eval[0]"):
        c = got[name]
        assert not c.passed and c.subject == "policy_evaluation", (name, c.subject)
        assert "policy_evaluation проходит проверку с ответом эталона на скрытых входах, а до них дело не дошло" \
            in c.message and "подобранный под открытые" not in c.message, (name, c.message)
    # a hidden twin that failed on its answer is still told as before
    records[-1] = {**result("test_eval[hidden-0]", "failed", "ожидалось 1"), "kind": "check"}
    told = {c.name: c for c in check_results(records)}["test_eval[0]"]
    assert "подобранный под открытые случаи" in told.message, told.message
