"""Where a failure sends the student: "fix that first" only when it is true.

A function's group defers to a callee's failures above only when the student's own function went through that
callee in these checks (the worker traces the calls between the student's functions; the in-notebook self-check
traces them in the kernel, on a snapshot of the namespace). A check's hint that sends the student to other checks
(grader.grading.checks.Defer) is shown only when one of them failed and is shown above, with the command that reruns it;
when that check is in the same group, it leads the group instead; otherwise the hint is left out.
"""
from __future__ import annotations

import contextlib
import io
import sys
import types

import pytest

from grader.base import homeworks
from grader.base.results import CheckResult, PartResult
from grader.boundary.tracing import Entered, room_for_tracing
from grader.notebook import check
from grader.reporting import export, feedback
from kit import HW, run_check, run_check_json

RERUN = f"python homework/check.py {HW}"
HOMEWORK = homeworks.load(HW)


def failure(name: str, subject: str, message: str, entered=None, defer=None) -> CheckResult:
    return CheckResult(f"tests/{HW}/test_ppo.py::{name}", name, f"проверка {name}", "failed", "check", message,
                       functions=[subject], subject=subject, subjects=[subject], entered=entered or {},
                       defer=defer or {})


def passing(name: str, subject: str) -> CheckResult:
    return CheckResult(f"tests/{HW}/test_ppo.py::{name}", name, f"проверка {name}", "passed", functions=[subject],
                       subject=subject, subjects=[subject])


def render(*checks: CheckResult) -> str:
    return feedback.scoreboard(HOMEWORK, [PartResult(HOMEWORK.part("ppo"), list(checks))], "ваш код", RERUN)


TD = failure("test_td", "td_errors", "Проверяли: δ\nПохоже на типичную ошибку: без γ.\nПодсказка: δ_t = r_t + γV − V")


@pytest.mark.parametrize("went", [True, False], ids=["gae-calls-td_errors", "gae-alone"])
def test_a_caller_defers_to_its_callee_only_when_the_students_code_went_through_it(went):
    gae = failure("test_gae", "gae", "Проверяли: gae\nПохоже на типичную ошибку: без λ.",
                  entered={"gae": ["td_errors"] if went else []})
    text = render(TD, gae)
    blocks = feedback.failure_blocks(text)
    deferral = "gae вызывает td_errors, где есть ошибки (см. выше): исправьте сначала её"
    if went:  # gae's checks are one line each, after the advice and the command that reruns td_errors' check
        assert deferral in text and len(blocks) == 1, text
        assert f'    Повторить td_errors: {RERUN} "ppo::test_td"' in text, text
    else:  # gae's own mistake is told in full: a broken td_errors does not explain it
        assert deferral not in text and len(blocks) == 2 and "без λ" in blocks[1], text


def test_a_hint_sending_the_student_elsewhere_is_shown_only_with_a_failed_check_above_and_its_rerun_command():
    defer = {"checks": ["test_td"], "text": "сначала исправьте проверку «δ» выше."}
    gae = failure("test_gae", "gae", f"Проверяли: gae\nПодсказка: {defer['text']}", defer=defer)
    text = render(TD, gae)  # the target failed, above: the hint stays, with the command
    assert f"Подсказка: {defer['text']}\n    Повторить ту проверку: {RERUN} \"ppo::test_td\"" in text, text
    text = render(passing("test_td", "td_errors"), gae)  # the target passed: the hint is a pointer to nothing
    assert "сначала исправьте" not in text and "Проверяли: gae" in text, text
    data = export.gradescope([PartResult(HOMEWORK.part("ppo"), [passing("test_td", "td_errors"), gae])], 1.0)
    assert "сначала исправьте" not in data["tests"][1]["output"], data["tests"][1]
    data = export.gradescope([PartResult(HOMEWORK.part("ppo"), [TD, gae])], 1.0)
    assert "сначала исправьте" in data["tests"][1]["output"], data["tests"][1]


def test_a_check_that_defers_to_another_of_its_group_lets_that_one_lead():
    """The issue's case: a cliff check said «fix the fork check above», which failed with an IndexError that no
    block showed. Now the fork check leads, and the deferring check is one line."""
    fork = CheckResult(f"tests/{HW}/test_ppo.py::test_fork", "test_fork", "Развилка", "failed", "error",
                       "ошибка в вашем коде: IndexError: index 4 is out of bounds", subject="gae", subjects=["gae"])
    cliff = failure("test_cliff", "gae", "Проверяли: путь\nПодсказка: сначала исправьте «Развилка» выше.",
                    defer={"checks": ["test_fork"], "text": "сначала исправьте «Развилка» выше."})
    blocks = feedback.failure_blocks(render(cliff, fork))
    assert blocks[0].startswith("✗ [ppo] Развилка") and "IndexError" in blocks[0], blocks


GAE_CALLS_TD = """
def td_errors(rewards, values, last_value, gamma):
    v = np.asarray(values, dtype=float)
    return np.asarray(rewards, dtype=float) + np.append(v[1:], last_value) - v  # no γ
"""
GAE_ALONE = GAE_CALLS_TD + """
def gae(rewards, values, last_value, gamma, lam):  # its own δ, and no λ in the recursion
    r, v = np.asarray(rewards, dtype=float), np.asarray(values, dtype=float)
    delta = r + gamma * np.append(v[1:], last_value) - v
    adv, acc = np.zeros_like(delta), 0.0
    for t in reversed(range(len(delta))):
        acc = delta[t] + gamma * acc
        adv[t] = acc
    return adv, adv + v
"""
SELECTED = ["ppo::test_td_errors_courier", "ppo::test_gae_courier[lam0.95]"]


@pytest.mark.slow
@pytest.mark.parametrize("edit", [GAE_CALLS_TD, GAE_ALONE], ids=["gae-calls-td_errors", "gae-alone"])
def test_the_worker_and_the_notebook_trace_the_students_calls_alike(edit, tmp_path):
    folder = tmp_path / "impl"
    folder.mkdir()
    source = (HOMEWORK.solutions_dir / "ppo.py").read_text(encoding="utf-8") + edit
    (folder / "ppo.py").write_text(source, encoding="utf-8")
    cli = run_check(HW, *SELECTED, "--dir", str(folder)).stdout
    namespace = {"__name__": "__main__"}
    exec(compile(source, "/tmp/ipykernel_0/cell1.py", "exec"), namespace)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        check("ppo", namespace)
    live = out.getvalue()
    deferral = "gae вызывает td_errors, где есть ошибки"
    for text in (cli, live):
        if edit is GAE_CALLS_TD:
            assert deferral in text, text
        else:
            assert deferral not in text and "в рекурсии только γ, без λ" in text, text
    # the live namespace's functions were traced on a snapshot: the notebook's own names are its functions
    assert namespace["gae"].__code__.co_filename == "/tmp/ipykernel_0/cell1.py"
    assert not hasattr(namespace["gae"], "__wrapped__")


def test_a_students_recursion_that_fits_the_limit_fits_it_traced():
    """A traced call is two frames: the tracing doubles the recursion limit while it runs, and restores it."""
    module = types.ModuleType("student")
    exec("def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n", vars(module))
    tracer = Entered()
    tracer.trace(module, lambda f: True)
    limit = sys.getrecursionlimit()
    with room_for_tracing():
        assert module.depth(limit - 100) == limit - 100
    assert sys.getrecursionlimit() == limit
    assert tracer.calls == {"depth": []}  # a function's calls of itself are not another function's


@pytest.mark.slow
def test_a_call_that_runs_out_of_time_still_says_which_functions_it_went_through(tmp_path):
    """q_from_v without γ: value_iteration never converges and is stopped at its limit; the worker's last words name
    the functions the call went through, so value_iteration defers to q_from_v's failure above."""
    folder = tmp_path / "impl"
    folder.mkdir()
    source = (HOMEWORK.solutions_dir / "dp.py").read_text(encoding="utf-8")
    source += "\n\ndef q_from_v(P, R, V, gamma):\n    return np.asarray(R, dtype=float) + np.asarray(P) @ V\n"
    (folder / "dp.py").write_text(source, encoding="utf-8")
    out = run_check(HW, "dp::test_chain_q_from_v", "dp::test_chain_optimal[value_iteration-gamma0.9]",
                    "--dir", str(folder), "--timeout", "1").stdout
    assert "value_iteration вызывает q_from_v, где есть ошибки" in out, out
    assert 'Повторить q_from_v: python homework/check.py' in out, out


def test_every_deferral_names_checks_or_functions_that_exist():
    """A Defer whose target names no check of its file and no function of its part would never be shown: its hint
    would be dropped without a word. Each name given after the text is a test of the same file or a function."""
    import ast

    stray = []
    for part in HOMEWORK.parts:
        tree = ast.parse((HOMEWORK.tests_dir / part.tests).read_text(encoding="utf-8"))
        tests = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
        functions = set(feedback.function_order(HOMEWORK, part))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Defer":
                names = [(a.value if isinstance(a, ast.Constant) else a.values[0].value).split("[")[0]
                         for a in node.args[1:]  # a name, or an f-string whose text begins with it
                         if isinstance(a, ast.Constant) or isinstance(a, ast.JoinedStr) and a.values
                         and isinstance(a.values[0], ast.Constant)]
                stray += [f"{part.tests}:{node.lineno} {n}" for n in names if n not in tests | functions]
                if len(node.args) < 2:
                    stray.append(f"{part.tests}:{node.lineno} names no check")
    assert not stray, stray


@pytest.mark.parametrize("alone", [True, False], ids=["grpo-check-alone", "after-log_softmax"])
def test_a_broken_log_softmax_is_not_told_it_divides_probabilities(alone, tmp_path):
    """GRPO's loss on tokens with log π ≈ −800 goes wrong with a log_softmax that takes the log of probabilities
    (log(softmax + 1e-12): a catalogued mistake of log_softmax) as it does with ratios taken as quotients. Its hint
    then sends the student to log_softmax's checks (shown only when one failed above), never to quotients: the
    student's code has none."""
    from catalogue import MUTANTS, mutant_folder

    _, _, folder = mutant_folder(MUTANTS / HW / "boss" / "log_softmax_eps_in_log.py", tmp_path)
    grpo = "boss::test_grpo_policy_loss_unlikely_tokens[33]"
    _, data = run_check_json(tmp_path, HW, *([] if alone else ["boss::test_log_softmax[0]"]), grpo, "--dir",
                             str(folder))
    told = next(t["output"] for t in data["tests"] if "GRPO для почти невозможных" in t["name"])
    assert "частные вероятностей" not in told, told
    assert ("сначала исправьте log_softmax" in told) == (not alone), told  # the pointer, only with its target above
