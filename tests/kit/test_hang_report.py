"""Where the student's code was when a call ran past its limit: the hang report, read from a real faulthandler dump.

faulthandler writes every name into the dump as ASCII, with escapes (``\\udcff``, ``\\x0a``, ``\\u044f``); the
checking side matches the submission's staged modules and the kit's notebook cells in that escaped form and never
decodes the dump back (grader/boundary/hang.py), so no file name the submission chose becomes a newline or a lone
surrogate in the checking process. Pure functions, no worker.
"""
from __future__ import annotations

import faulthandler

from grader.boundary.hang import HangReport


def hang_report(tmp_path, frames: list[tuple[str, str]]) -> HangReport:
    """A hang report holding the stack of a chain of calls, outermost first: each ``(file name, function)``
    compiled under that file name, the innermost writing the dump at its line 2."""
    report = HangReport(tmp_path)
    report.fresh()
    scope = {"faulthandler": faulthandler, "dump_file": report.file}
    call = "faulthandler.dump_traceback(file=dump_file, all_threads=False)"
    for filename, function in reversed(frames):
        exec(compile(f"def {function}():\n    {call}\n", filename, "exec"), scope)
        call = f"{function}()"
    exec(call, scope)
    return report


def test_a_staged_module_whose_name_is_not_utf8_is_named_escaped_and_a_cell_by_the_kits_words(tmp_path):
    scratch = tmp_path / "work-1"
    name = "norm\udcfe\ny.py"  # bytes b"norm\xfe\ny.py" as the file system gives them: a lone surrogate, a newline
    sources = {name: ["def inner():", "    while True: pass"]}
    report = hang_report(tmp_path, [("<ячейка 3>", "gae"), (str(scratch / name), "inner")])
    assert report.where("gae", scratch, sources) == ("В этот момент выполнялась функция inner (norm\ufffd\\x0ay.py, "
                                                      "строка 2): «while True: pass», вызванная из gae.")
    assert report.where("gae", tmp_path / "work-2", sources) == \
        "В этот момент выполнялась функция gae (ячейка 3, строка 2)."  # another folder's module is not the submission's
    report.close()


def test_a_name_made_to_look_like_a_cell_is_never_decoded_into_the_checking_process(tmp_path):
    report = hang_report(tmp_path, [("<ячейка 1\udcff\nx.py>", "gae")])
    assert report.where("gae", tmp_path, {}) == ""  # not a cell of the kit's: no frame of the submission's
    report.close()
    report = hang_report(tmp_path, [("<ячейка 12>", "gae")])
    assert report.where("gae", tmp_path, {}) == "В этот момент выполнялась функция gae (ячейка 12, строка 2)."
    report.close()


def test_a_forged_dump_is_only_text(tmp_path):
    """The worker can write anything into its hang file: a frame with a line number of 5000 digits (which int()
    refuses) is no frame, and where() says nothing rather than raise."""
    report = HangReport(tmp_path)
    report.fresh()
    report.file.write(b'  File "' + str(tmp_path).encode() + b'/ppo.py", line ' + b"9" * 5000 + b" in gae\n")
    report.file.flush()
    assert report.where("gae", tmp_path, {"ppo.py": ["def gae():"]}) == ""
    report.close()
