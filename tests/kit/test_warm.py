"""The warm start: a batch's checking processes are forked by one checking template (grader.grading.warm) and its
zygotes by one worker template (grader.boundary.template); they grade as cold ones do, whatever each request says about
its inputs and its confinement, and no worker holds anything of the key; one grade from the command line (as Gradescope
grades a submission) is warm too and grades as a cold one; the cold path (``HWKIT_WARM=off``) stays as it was.

The class is the reference, the untouched stubs and one catalogued mistake, on the parts dp and ppo (the cheapest two),
graded in each confinement a grade for the record is given under (kit.MODES).
"""
from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path
from unittest import mock

import pytest
import warm_cli

from grader.base import homeworks
from grader.grading import runner, warm
from kit import HW, MODES, in_process, mode_env, run_check

pytestmark = [pytest.mark.slow,  # grades a class twice in each mode: left out of the everyday loop
              pytest.mark.skipif(not warm.available(), reason="no checking template here (Linux only)")]

PARTS = ("dp", "ppo")
MISTAKE = Path(__file__).resolve().parent / "mutants" / HW / "dp" / "eval_max_over_actions.py"


def _class(folder: Path) -> None:
    hw = homeworks.load(HW)
    for name, source in (("reference", hw.solutions_dir), ("stubs", hw.homework_dir), ("mistake", hw.solutions_dir)):
        (folder / name).mkdir(parents=True)
        for part in PARTS:
            shutil.copy(source / f"{part}.py", folder / name / f"{part}.py")
    dp = folder / "mistake" / "dp.py"
    dp.write_text(dp.read_text(encoding="utf-8") + "\n\n# ---- mutant ----\n" + MISTAKE.read_text(encoding="utf-8"),
                  encoding="utf-8")


def _graded(folder: Path, out: Path, mode: str, warm_start: str) -> tuple[list[dict], dict[str, dict]]:
    """The batch's CSV rows and records, less what depends on time (seconds, CPU)."""
    proc = run_check(HW, *PARTS, "--batch", str(folder), "--jobs", "2", "--csv", str(out / "scores.csv"),
                     "--report", str(out / "report"), env_extra={**mode_env(mode), warm.WARM_ENV: warm_start})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(out / "scores.csv", encoding="utf-8", newline="") as f:
        rows = [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(f)]
    records = {p.stem: _timeless(json.loads(p.read_text(encoding="utf-8")))
               for p in sorted((out / "report" / "records").glob("*.json"))}
    return rows, records


def _timeless(value):
    """A record less what differs between two gradings of one class: times, and the uid leased for a submission's
    workers (another grading on the machine may hold the first one meanwhile)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in ("seconds", "cpu", "time", "graded_at")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return re.sub(r"uid \d+", "uid N", value) if isinstance(value, str) else value


@pytest.mark.parametrize("mode", MODES)
def test_a_warm_batch_grades_as_a_cold_one(tmp_path, mode):
    """The same CSV rows and the same records (times aside) from a batch whose checking processes are forked by the
    template and from one that starts each cold (HWKIT_WARM=off); and the grade is the one each submission earns."""
    folder = tmp_path / "class"
    _class(folder)
    warm_rows, warm_records = _graded(folder, tmp_path / "warm", mode, "on")
    cold_rows, cold_records = _graded(folder, tmp_path / "cold", mode, "off")
    assert warm_rows == cold_rows
    for name in cold_records:
        assert warm_records.get(name) == cold_records[name], name
    totals = {row["submission"]: float(row["total"]) for row in warm_rows}
    assert totals["reference"] == 35.0 and totals["stubs"] == 0.0 and 0.0 < totals["mistake"] < 35.0, totals
    assert all(row["inputs"] == "hidden" for row in warm_rows), warm_rows


# how a command line is started: by exec with templates of its own (as a Gradescope container runs one grade), by
# exec and cold (HWKIT_WARM=off), and forked by the kit suite's warm process with the suite's templates (warm_cli)
STARTS = {"own templates": {warm_cli.OFF_ENV: "off"}, "cold": {warm_cli.OFF_ENV: "off", warm.WARM_ENV: "off"},
          "the suite's": {}}


@pytest.mark.parametrize("mode", MODES)
def test_one_warm_grade_grades_as_a_cold_one(tmp_path, mode):
    """One grade from the command line (its checking processes and zygotes forked by templates of its own, or by the
    suite's) gives the JSON a cold one (HWKIT_WARM=off) gives, times aside: the catalogued mistake's, on hidden inputs
    too, two checking processes (--jobs 2)."""
    folder = tmp_path / "class"
    _class(folder)
    graded = {}
    for start, env in STARTS.items():
        out = tmp_path / "results.json"
        proc = run_check(HW, *PARTS, "--dir", str(folder / "mistake"), "--jobs", "2", "--json", str(out),
                         env_extra={**mode_env(mode), **env})
        assert proc.returncode == 1 and out.is_file(), proc.stdout + proc.stderr  # the mistake fails a required check
        record = json.loads(out.read_text(encoding="utf-8"))
        del record["execution_time"]  # the command line's seconds
        graded[start] = _timeless(record)
    assert graded["own templates"] == graded["cold"] == graded["the suite's"]
    assert 0.0 < graded["cold"]["score"] < 35.0 and graded["cold"]["extra_data"]["inputs"] == "hidden", graded["cold"]


def _summary(result) -> tuple:
    return (result.error, result.inputs, result.confinement,
            [(c.nodeid, c.outcome, c.kind, c.message, c.weight, c.bonus, c.hidden, c.twin) for c in result.checks])


def _can(mode: str) -> bool:
    try:
        with in_process(mode):
            return True
    except pytest.skip.Exception:
        return False


def test_one_template_takes_inputs_and_confinement_from_each_request():
    """One template, four gradings one after another: the self-check and the grade, in two modes. Each forked
    checking process collects what its own request asks for (hidden twins in the grade only) and confines its
    workers as its own request says (the confinement field names the mode), and each result equals the cold one."""
    hw = homeworks.load(HW)
    part = hw.part("mc_td")  # it has checks run on hidden inputs under names of their own (grade-only, behaviour)
    impl = str(hw.solutions_dir)
    forked = []
    run = warm.Template.run

    def counted(self, *args, **kwargs):
        proc = run(self, *args, **kwargs)
        forked.append(proc.pid)
        return proc

    modes = [m for m in (*MODES, "same") if _can(m)][:2]  # "same": without namespaces, as the grader's own user
    if len(modes) < 2:
        pytest.skip("one confinement only on this machine")
    grades = [(mode, public) for mode in modes for public in (True, False)]
    warm_results, cold_results = [], []
    with mock.patch.object(warm.Template, "run", counted):
        with runner.checking_template() as template:
            assert template is not None
            for mode, public in grades:
                with in_process(mode):
                    warm_results.append(runner.run_part(hw, part, impl, public=public))
    assert len(forked) == len(grades), "a checking process was started cold while the template ran"
    for mode, public in grades:
        with in_process(mode):
            cold_results.append(runner.run_part(hw, part, impl, public=public))
    for (mode, public), warm_result, cold_result in zip(grades, warm_results, cold_results):
        assert _summary(warm_result) == _summary(cold_result), (mode, public)
        assert warm_result.inputs == ("public" if public else "hidden")
        # the child collected the inputs its request named: checks on hidden inputs in the grade only
        assert any(c.hidden for c in warm_result.checks) == (not public), (mode, public)
        said = warm_result.confinement
        assert ("пространства имён Linux" in said) == (mode == "namespaces"), said
        assert warm_result.score == part.points, (mode, public, warm_result.error)


def test_a_template_that_is_gone_leaves_the_cold_path():
    """The template killed under the batch: the next grading starts its checking process cold and grades."""
    hw = homeworks.load(HW)
    part = hw.part("dp")
    with runner.checking_template() as template:
        template.proc.kill()
        template.proc.wait()
        result = runner.run_part(hw, part, str(hw.solutions_dir), public=True)
    assert result.error == "" and result.score == part.points


# A submission that looks for the key in its own process: every module it has (sys.modules) and every object the
# collector knows (gc) of the checking side's (pytest, the grader's plugin and key, the key's modules), and in every
# anonymous page of its memory the key's module names (``_hwkit_key_<hw>_<part>``) and the text of a secret
# (``SECRET_PREFIX`` and 24 hex digits: it cannot know the test's secret, so it reports every such text; a decoy of its
# own, made at import, shows that the scan finds one). It says where its zygote came from: the worker template, or an
# exec of its own.
SECRET_PREFIX = "warm-secret-"
SCANS_ITSELF = '''
import ctypes, gc, os, re, sys

_DECOY = bytes.fromhex("{prefix}") + os.urandom(12).hex().encode()  # a secret's text, its own
_CHECKING = ("pytest", "_pytest", "grader.grading.plugin", "grader.grading.key", "grader.grading.hidden",
             "grader.grading.checks", "grader.grading.warm", "grader.grading.runner", "_hwkit_key")


def _pages():
    """The readable anonymous pages of this process (the heap, the stack, the interpreter's arenas)."""
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split()
            name = fields[5] if len(fields) > 5 else ""
            if fields[1].startswith("r") and name in ("", "[heap]", "[stack]"):
                start, end = (int(x, 16) for x in fields[0].split("-"))
                yield ctypes.string_at(start, end - start)


def _scan():
    secret = re.compile(bytes.fromhex("{prefix}") + rb"[0-9a-f]{{24}}")
    found, key = [], re.compile(bytes.fromhex("{key}") + rb"_[a-z_]+")
    for page in _pages():
        found += [m.group().decode() for m in secret.finditer(page)]
        found += ["key-module:" + m.group().decode() for m in key.finditer(page)]
    modules = sorted(m for m in sys.modules if m.startswith(_CHECKING))
    objects = {{getattr(o, "__module__", "") for o in gc.get_objects() if callable(o)}}
    objects = sorted(m for m in objects if isinstance(m, str) and m.startswith(_CHECKING))
    with open(f"/proc/{{os.getppid() if os.getpid() != 1 else 1}}/cmdline", "rb") as f:
        parent = f.read()
    zygote = "parent:" + ("template" if b"boundary.template" in parent else "exec" if b"zygote()" in parent else "?")
    return [zygote, *sorted(set(found)), "modules:" + ",".join(modules), "objects:" + ",".join(objects), "end"]


def _hidden():
    """Whether this is the worker of hidden checks: the one that may not change its umask."""
    try:
        os.umask(os.umask(0o022))
        return False
    except OSError:  # refused by its seccomp filter
        return True


def td_errors(rewards, values, last_value, gamma):
    """Right in the public worker; the hidden one reports (shown as its twin's failure with --show-hidden)."""
    if _hidden():
        raise ValueError(" | ".join(_scan())[:1500])
    import numpy as np

    v = np.asarray(values, dtype=float)
    return np.asarray(rewards, dtype=float) + gamma * np.append(v[1:], float(last_value)) - v


def gae(rewards, values, last_value, gamma, lam):
    """The public worker reports."""
    raise ValueError(" | ".join(_scan())[:1500])
'''


@pytest.mark.parametrize("how", ["batch", "one grade"])
@pytest.mark.parametrize("mode", MODES)
def test_no_worker_forked_from_the_worker_template_holds_the_key(tmp_path, mode, how):
    """A warm batch, and one warm grade from the command line, graded with a secret of the test's own, on hidden
    inputs too: the public and the hidden worker of a submission that scans its own modules, objects and memory find
    their decoy, and neither the secret's text, nor a module of the answer key, nor anything of pytest or the grader's
    checking side; their zygotes were forked by the worker template the command line started itself (the warm path a
    batch or a Gradescope container takes, not the kit suite's templates)."""
    import os

    hw = homeworks.load(HW)
    secret_text = SECRET_PREFIX + os.urandom(12).hex()
    secret_file = hw.tests_dir / "key" / f"secret-warm-{os.getpid()}"
    secret_file.write_text(secret_text + "\n", encoding="utf-8")
    folder = tmp_path / "class"
    (folder / "scanner").mkdir(parents=True)
    key_prefix = "_hwkit_key_" + hw.tests_dir.name
    (folder / "scanner" / "ppo.py").write_text(SCANS_ITSELF.format(prefix=SECRET_PREFIX.encode().hex(),
                                                                   key=key_prefix.encode().hex()), encoding="utf-8")
    out = tmp_path / "feedback" if how == "batch" else tmp_path / "results.json"
    source = ["--batch", str(folder), "--feedback", str(out)] if how == "batch" else \
        ["--dir", str(folder / "scanner"), "--json", str(out)]
    try:
        proc = run_check(HW, "ppo::test_td_errors_random", "ppo::test_gae_courier[lam0.5]", *source, "--show-hidden",
                         env_extra={**mode_env(mode), "HWKIT_SECRET_FILE": str(secret_file), warm.WARM_ENV: "on",
                                    warm_cli.OFF_ENV: "off"})  # the command line by exec: its own templates
    finally:
        secret_file.unlink()
    said = ""
    if proc.returncode in (0, 1) and how == "batch":
        said = (out / "scanner.txt").read_text(encoding="utf-8")
    elif proc.returncode in (0, 1):  # each check's own text (the hidden worker's report is its twin's failure)
        said = "\n".join(test["output"] for test in json.loads(out.read_text(encoding="utf-8"))["tests"])
    reports = [line for line in said.splitlines() if "parent:" in line]
    assert len(reports) >= 2, f"the public and the hidden worker's reports are not both there\n{proc.stderr}\n{said}"
    for report in reports:
        assert "parent:template" in report, report  # forked by the worker template: the warm path
        decoys = re.findall(SECRET_PREFIX + "[0-9a-f]{24}", report)
        assert decoys, f"the scan found not even its own decoy: it proves nothing\n{report}"
        assert secret_text not in report and "key-module:" not in report, report
        fields = report.split(" (ppo.py, ")[0].split(" | ")
        assert "modules:" in fields and "objects:" in fields, report  # none of the checking side's
        assert fields[-1] == "end", f"the report was cut: it proves nothing\n{report}"
