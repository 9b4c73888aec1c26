"""What crosses from the worker to the grading process: plain data, rebuilt as exact types, or nothing."""
from __future__ import annotations

import json
import struct
import textwrap

import numpy as np
import pytest

from grader.boundary import wire


def roundtrip(value):
    return wire.decode(wire.encode(value))


@pytest.mark.parametrize("value", [
    None, True, False, 0, -7, 2**80, 1.5, float("inf"), complex(1, -2), "δ_t", [], (), {},
    [1, [2.0, (3, "x")], {"a": None, 4: [True]}],
], ids=repr)
def test_plain_values_come_back_equal_and_of_the_same_type(value):
    got = roundtrip(value)
    assert got == value and type(got) is type(value)


def test_nan_comes_back_as_nan():
    assert np.isnan(roundtrip(float("nan")))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint16", "bool", "complex128"])
def test_arrays_and_numpy_scalars_keep_dtype_shape_and_values(dtype):
    arr = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
    got = roundtrip(arr)
    assert type(got) is np.ndarray and got.dtype == arr.dtype and got.shape == arr.shape
    assert np.array_equal(got, arr) and got.flags.writeable
    scalar = arr.ravel()[5]
    back = roundtrip(scalar)
    assert type(back) is type(scalar) and back == scalar


def test_non_contiguous_and_empty_arrays():
    arr = np.arange(12.0).reshape(3, 4)[:, ::2]
    assert np.array_equal(roundtrip(arr), arr)
    assert roundtrip(np.zeros((0, 3))).shape == (0, 3)


def test_a_generator_comes_back_in_the_same_state():
    rng = np.random.default_rng(5)
    rng.random(3)
    got = roundtrip(rng)
    assert type(got) is np.random.Generator and got.random() == rng.random()


def test_namedtuple_and_collections_dicts_come_back_as_plain_tuple_and_dict():
    from collections import OrderedDict, namedtuple

    pair = namedtuple("Pair", "a b")(1, 2)
    assert type(roundtrip(pair)) is tuple and roundtrip(pair) == (1, 2)
    assert type(roundtrip(OrderedDict(a=1))) is dict


class _Sneaky(np.ndarray):
    pass


class _MyFloat(float):
    pass


@pytest.mark.parametrize("value,words", [
    (np.zeros(3).view(_Sneaky), "подкласс np.ndarray"),
    (_MyFloat(1.0), "подкласс float"),
    (np.array([object()], dtype=object), "dtype=object"),
    (np.zeros(2, dtype=[("a", "f8")]), "dtype"),
    (object(), "объект типа builtins.object"),
    ({(1, 2): 3}, "ключ словаря"),
    (lambda: 0, "объект типа builtins.function"),
    (np.datetime64("2026-01-01"), "скаляр NumPy"),
], ids=["ndarray_subclass", "float_subclass", "object_array", "structured", "object", "tuple_key", "function",
        "datetime"])
def test_anything_else_is_refused_with_its_type_named(value, words):
    with pytest.raises(wire.Unsendable, match=words):
        wire.encode(value)


def test_nesting_past_the_limit_is_refused():
    deep: list = []
    for _ in range(wire.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(wire.Unsendable):
        wire.encode(deep)


def frame(tree, blob=b""):
    text = json.dumps(tree).encode()
    return struct.pack("<II", len(text), len(blob)) + text + blob


@pytest.mark.parametrize("bad", [
    b"", b"\x00" * 5,
    frame({"$nd": ["|O", [1], 0, 8]}, b"\x00" * 8),  # object dtype: could carry pointers
    frame({"$nd": ["<f8", [2], 0, 8]}, b"\x00" * 8),  # shape and bytes disagree
    frame({"$nd": ["<f8", [1], 8, 8]}, b"\x00" * 8),  # past the end of the frame
    frame({"$nd": ["<f8", [-1], 0, 0]}),
    frame({"$nd": ["V8", [1], 0, 8]}, b"\x00" * 8),
    frame({"$np": ["|O", "00"]}),
    frame({"$gen": {"$dict": [["bit_generator", "Evil"]]}}),
    frame({"$pickle": "gASVAAAAAAAAAAA="}),  # no such tag: nothing is ever unpickled
    frame({"a": 1}),  # a plain JSON object is not a dict of the wire
    frame({"$dict": [[[1], 2]]}),
    frame({"$int": "1" * 6000}),
    frame([{"$tuple": []}] * 2)[:-3],  # cut short
    struct.pack("<II", 10**9, 0),  # claims a length it does not have
], ids=lambda b: repr(b[:30]))
def test_malformed_or_hostile_frames_are_refused(bad):
    with pytest.raises(wire.WireError):
        wire.decode(bad)


def test_deeply_nested_json_is_refused_not_a_crash():
    text = ("[" * 100_000 + "]" * 100_000).encode()
    with pytest.raises(wire.WireError):
        wire.decode(struct.pack("<II", len(text), 0) + text)


def test_journal_entries_are_checked_one_by_one():
    calls = [((), "step", (np.int64(2),), {}), (("action_space",), "sample", (), {})]
    journal = wire.decode(wire.encode(wire.Journal(calls)))
    entries = list(journal.entries())
    assert entries[0][1] == "step" and type(entries[0][2][0]) is np.int64 and entries[1][0] == ["action_space"]
    for text in (json.dumps([[[], "step", [{"$pickle": ""}], {}]]), '[[["__class__"], 1]', "[" * 100_000):
        bad = wire.decode(wire.encode(wire.Journal.parse(text)))  # read only when replayed, and refused then
        with pytest.raises(wire.WireError):
            list(bad.entries())


def test_a_frame_longer_than_the_limit_is_refused_before_it_is_read():
    import io

    stream = io.BytesIO(struct.pack("<Q", 10**12) + b"x" * 10)
    with pytest.raises(wire.WireError):
        wire.read_frame(stream)


def test_an_untracked_call_sends_back_no_journal_and_the_same_answer():
    """call_once (a fresh environment for one run) skips the journal of the environment's steps: the test's
    environment stays as it was, and the answer is the tracked call's."""
    from grader.base import homeworks
    from grader.boundary.session import Session
    from grader.boundary.staging import import_provided
    from grader.grading.checks import call_once

    hw = homeworks.load("s6-hw00-rl-foundations")
    envs = import_provided(hw, "envs")  # the kit's provided module, as the graded tests get it
    session = Session(hw, hw.solutions_dir, 20)
    try:
        sarsa = session.module("control").sarsa
        tracked_env, fresh_env = envs.CliffWalking(), envs.CliffWalking()
        tracked = sarsa(tracked_env, 5, seed=3)
        once = call_once(sarsa, fresh_env, 5, seed=3)
        assert all(np.array_equal(a, b) for a, b in zip(tracked, once))
        assert tracked_env.s == envs.CliffWalking.goal_state  # the journal was replayed on the test's environment
        assert fresh_env.s == envs.CliffWalking.start_state and fresh_env.elapsed_steps == 0  # nothing came back
    finally:
        session.close()


@pytest.mark.parametrize("entry", [
    [["episodes"], "append", [[[0, 0, 0.0, 0, True, False]]], {}],  # fabricated "recorded" episodes
    [["env", "next"], "tofile", ["/tmp/x"], {}],  # a method of an attribute's attribute: writes a file
    [[], "__init__", [None], {}],
    [[], "_s", [], {}],
])
def test_an_environment_journal_holds_only_the_environment_api(entry):
    import sys

    from grader.base.homeworks import ROOT
    from grader.boundary.errors import WorkerCrashed
    from grader.boundary.journal import replay

    sys.path.insert(0, str(ROOT / "tests" / "s6-hw00-rl-foundations" / "shared"))
    from control_envs import Fork, Recorder

    env = Recorder(Fork())
    ok = [[[], "reset", [], {"seed": 0}], [["action_space"], "sample", [], {}], [[], "step", [0], {}]]
    replay(env, wire.Journal.parse(json.dumps(ok)))
    assert len(env.episodes) == 1 and len(env.episodes[0]) == 1
    with pytest.raises(WorkerCrashed, match="не из API среды"):
        replay(env, wire.Journal.parse(json.dumps(ok + [entry])))
    assert len(env.episodes) == 1 and len(env.episodes[0]) == 1, "a refused journal is not replayed in part"


def test_a_students_exception_keeps_its_builtin_base_and_its_name(tmp_path):
    """``class BadInput(ValueError)`` raised in the worker is a ValueError here (a check expecting ValueError on bad
    input passes), and the report still names BadInput; a class of no builtin base but Exception is no ValueError."""
    from grader.base import homeworks
    from grader.boundary.session import Session
    from grader.grading.explain import describe_remote

    (tmp_path / "ppo.py").write_text(textwrap.dedent('''
        class BadInput(ValueError):
            pass


        class Odd(Exception):
            pass


        def td_errors(rewards, values, last_value, gamma):
            raise BadInput("rewards и values разной длины")


        def gae(rewards, values, last_value, gamma, lam):
            raise Odd("странно")
    '''), encoding="utf-8")
    session = Session(homeworks.load("s6-hw00-rl-foundations"), tmp_path, 20)
    try:
        with pytest.raises(ValueError) as info:
            session.module("ppo").td_errors([1.0], [1.0, 2.0], 0.0, 0.9)
        assert describe_remote(info.value).startswith("BadInput: rewards и values разной длины")
        with pytest.raises(Exception) as other:
            session.module("ppo").gae([1.0], [1.0], 0.0, 0.9, 0.5)
        assert not isinstance(other.value, ValueError) and describe_remote(other.value).startswith("Odd: странно")
    finally:
        session.close()


def test_the_workers_text_in_an_explanation_is_escaped_whatever_its_answer_holds():
    """An answer is data a submission could forge: any text (a lone surrogate, a newline) and frames of any shape.
    Every explanation made of it holds that text escaped only, and nothing of it makes the checking process raise."""
    from grader.boundary.errors import BadAnswer, remote_error
    from grader.boundary.replies import apply
    from grader.grading.explain import explain

    bad, shown = "x\udcff\ny", "x\\udcff\\x0ay"
    remote = [{"kind": "todo", "frames": [["f.py", 1, bad, ""]], "message": bad},
              {"kind": "todo", "frames": [1, ["f.py"], None], "message": bad},  # frames that are no frames
              {"kind": "exit", "message": bad}, {"kind": "missing", "message": bad},
              {"kind": "error", "type": "ValueError", "message": bad, "frames": [[bad, 3, bad, bad]]}]
    told = [explain(remote_error(info, "gae"))[1] for info in remote]
    told.append(explain(ValueError("сравнение"), None, [("gae", bad)])[1])  # a parameter's name, as the worker said
    with pytest.raises(BadAnswer) as unsendable:
        apply({"unsendable": {0: bad}}, ([1.0],), {}, "gae")
    told.append(str(unsendable.value))
    for text in told:
        assert shown in text and bad not in text and "\udcff" not in text, text
