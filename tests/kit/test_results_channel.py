"""The grader's command line trusts only what it can check: signed events, one verdict per collected check.

Pure functions, no processes: how the runner turns the checking process's event lines into verdicts.
"""
from __future__ import annotations

from grader.base.escape import printable
from grader.boundary import events
from grader.grading.runner import check_results

ITEMS = [{"nodeid": f"t.py::test_{n}", "name": f"test_{n}", "title": f"проверка {n}", "weight": 1.0, "bonus": False}
         for n in ("a", "b", "c")]


def result(name: str, outcome: str, **extra) -> dict:
    return {"event": "result", "nodeid": f"t.py::test_{name}", "name": f"test_{name}", "title": "t", "weight": 1.0,
            "bonus": False, "outcome": outcome, "kind": "", "message": "", "traceback": "", **extra}


def test_every_collected_check_gets_exactly_one_verdict_the_first():
    records = [{"event": "collected", "items": ITEMS}, result("a", "failed", kind="check"), result("a", "passed"),
               result("b", "passed")]
    got = {c.name: c.outcome for c in check_results(records)}
    assert got == {"test_a": "failed", "test_b": "passed", "test_c": "failed"}  # c never reported: failed


def test_invented_checks_and_their_weights_are_ignored():
    forged = result("invented", "passed", weight=-1000.0)
    checks = check_results([{"event": "collected", "items": ITEMS}, forged, result("a", "passed", weight=1e9,
                                                                                   title="поддельная")])
    assert [c.name for c in checks] == ["test_a", "test_b", "test_c"]
    a = checks[0]
    assert a.weight == 1.0 and a.title == "проверка a"  # weight and title come from the collection


def test_nothing_after_the_end_counts():
    checks = check_results([{"event": "collected", "items": ITEMS}, {"event": "finished"}, result("a", "passed")])
    assert [c.outcome for c in checks] == ["failed"] * 3


def test_an_outcome_other_than_passed_is_a_failure():
    checks = check_results([{"event": "collected", "items": ITEMS[:1]}, result("a", "skipped")])
    assert checks[0].outcome == "failed"


def test_a_line_without_the_runs_signature_is_not_an_event():
    key, other = b"k" * 64, b"x" * 64
    line = events.line(key, {"event": "result", "outcome": "passed"}).encode()
    assert events.read(key, line) == {"event": "result", "outcome": "passed"}
    assert events.read(other, line) is None  # signed with another key
    assert events.read(key, b'{"event": "result", "outcome": "passed"}\n') is None  # not signed at all
    tampered = line.replace(b"passed", b"failed")
    assert events.read(key, tampered) is None


def test_an_event_with_text_that_is_not_valid_unicode_is_written_and_read_as_valid_escaped_text():
    """A worker's text may hold a lone surrogate (a file name that is not UTF-8, a forged ``\\udcff`` in a frame):
    writing the event never fails (the checking process once died here), and what the runner reads back is valid
    Unicode with the surrogate as a visible escape, in every field and key."""
    key = b"k" * 64
    bad = "gae\udcff\nx.py: ячейка"
    record = {"event": "result", "message": bad, "entered": {bad: [bad]}, "functions": (bad,), "weight": 1.0}
    line = events.line(key, record)
    assert line.isascii() and line.count("\n") == 1
    back = events.read(key, line.encode("utf-8"))
    shown = "gae\\udcff\nx.py: ячейка"
    assert back == {"event": "result", "message": shown, "entered": {shown: [shown]}, "functions": [shown],
                    "weight": 1.0}
    assert printable(bad) == "gae\\udcff\\x0ax.py: ячейка"  # and escaped for where it lands
