"""Same code, same verdict on every machine: no graded check hinges on last-bit rounding.

Another BLAS kernel, CPU or NumPy build returns the same linear algebra up to a few ulps, and that was
enough to make a policy iteration with a bare ``np.argmax`` stop on one machine and loop forever on
another. Here the implementation itself plays such a kernel: its own ``solve`` and matrix products
multiply their results by (1 + k·ε·u), u ~ U(−1, 1), from a seeded generator (k = 0 is this machine's
kernel as it is). Nothing of NumPy is patched: the noise lives in the graded module's own helpers.
Tie-sensitive implementations are graded under several noise seeds; each must pass exactly the same
checks every time, and the set it is expected to pass.
"""
from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.base import homeworks
from grader.grading.runner import run_part

pytestmark = pytest.mark.slow  # grades whole homeworks: left out of the everyday loop (-m "not slow")

HW = "s6-hw00-rl-foundations"

# The dp functions again, with every solve and matrix product of theirs perturbed by a few ulps.
NOISY_DP = '''

# ---- linear algebra with the rounding of another kernel ----
_NOISE = np.random.default_rng({seed})


def _jitter(x):
    x = np.asarray(x, dtype=float)
    return x * (1.0 + {ulps} * np.finfo(float).eps * _NOISE.uniform(-1.0, 1.0, size=x.shape))


def _solve(a, b):
    return _jitter(np.linalg.solve(a, b))


def _matmul(a, b):
    return _jitter(a @ b)


def _bare_argmax(Q):
    return np.eye(Q.shape[1])[np.argmax(Q, axis=1)]


def solve_bellman(P, R, policy, gamma):
    P, R, policy = _validated(P, R, policy)
    P_pi = np.einsum("sa,sat->st", policy, P)
    r_pi = np.sum(policy * R, axis=1)
    system = np.eye(len(r_pi)) - gamma * P_pi
    if np.linalg.cond(system) > 1e12:
        raise ValueError("система вырождена: используйте policy_evaluation")
    return _solve(system, r_pi)


def policy_evaluation(P, R, policy, gamma, tol=1e-10):
    P, R, policy = _validated(P, R, policy)
    P_pi = np.einsum("sa,sat->st", policy, P)
    r_pi = np.sum(policy * R, axis=1)
    V = np.zeros(len(r_pi))
    while True:
        V_new = r_pi + gamma * _matmul(P_pi, V)
        if np.max(np.abs(V_new - V)) < tol:
            return V_new
        V = V_new


def q_from_v(P, R, V, gamma):
    P, R, _ = _validated(P, R)
    V = np.asarray(V, dtype=float)
    if V.shape != (P.shape[0],):
        raise ValueError("V должна иметь форму [S]")
    return R + gamma * _matmul(P, V)


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])
    while True:
        V_new = q_from_v(P, R, V, gamma).max(axis=1)
        if np.max(np.abs(V_new - V)) < tol:
            break
        V = V_new
    return V_new, {vi_greedy}(q_from_v(P, R, V_new, gamma))


def policy_iteration(P, R, gamma):
    P, R, _ = _validated(P, R)
    S, A = R.shape
    policy = np.full((S, A), 1.0 / A)
    while True:
        V = {pi_evaluate}
        improved = {pi_greedy}(q_from_v(P, R, V, gamma))
        if np.array_equal(improved, policy):
            return V, policy
        policy = improved
'''
BY_SOLVE = "solve_bellman(P, R, policy, gamma) if gamma < 1 else policy_evaluation(P, R, policy, gamma)"
ITERATIVE = "policy_evaluation(P, R, policy, gamma)"

# name: (the template's blanks, the checks it must fail on every machine)
IMPLEMENTATIONS = {
    "tie_rule": ({"vi_greedy": "_greedy", "pi_evaluate": BY_SOLVE, "pi_greedy": "_greedy"}, set()),
    "pi_argmax_after_solve": ({"vi_greedy": "_greedy", "pi_evaluate": BY_SOLVE, "pi_greedy": "_bare_argmax"},
                              {"test_tie_rule[policy_iteration]", "test_gridworld_5x5_optimal[policy_iteration]"}),
    "argmax_after_iterative_and_matmul": (
        {"vi_greedy": "_bare_argmax", "pi_evaluate": ITERATIVE, "pi_greedy": "_bare_argmax"},
        {"test_tie_rule[value_iteration]", "test_tie_rule[policy_iteration]",
         "test_gridworld_5x5_optimal[policy_iteration]"}),
}
NOISE = [(0, 0), (4, 1), (4, 2)]  # (ulps, seed): this machine's kernel, and two others
# every check that takes an argmax of values computed by linear algebra (the evaluation checks compare values
# with tolerances far above rounding)
DP_CHECKS = ["test_chain_optimal", "test_tie_rule", "test_gridworld_5x5_optimal", "test_gridworld_4x3",
             "test_optimal_random", "test_no_single_state_change_improves"]


def _folder(tmp: Path, blanks: dict, ulps: int, seed: int) -> Path:
    hw = homeworks.load(HW)
    folder = tmp / "impl"
    shutil.copytree(hw.solutions_dir, folder, ignore=shutil.ignore_patterns("__pycache__"))
    module = folder / "dp.py"
    module.write_text(module.read_text(encoding="utf-8") + NOISY_DP.format(ulps=ulps, seed=seed, **blanks),
                      encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    """{(implementation, ulps, seed): (passed checks, failed checks, failure kinds)}, graded two at a time."""
    hw = homeworks.load(HW)
    part = hw.part("dp")

    def grade(key):
        name, ulps, seed = key
        folder = _folder(tmp_path_factory.mktemp(f"{name}-{ulps}-{seed}"), IMPLEMENTATIONS[name][0], ulps, seed)
        result = run_part(hw, part, str(folder), selection=DP_CHECKS)
        assert not result.error, result.error
        return ({c.name for c in result.checks if c.passed}, {c.name for c in result.checks if not c.passed},
                {c.name: c.kind for c in result.checks if not c.passed})

    keys = [(name, ulps, seed) for name in IMPLEMENTATIONS for ulps, seed in NOISE]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(keys, pool.map(grade, keys)))


@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_same_verdict_under_rounding_noise(name, verdicts):
    expected_failures = IMPLEMENTATIONS[name][1]
    runs = {(ulps, seed): verdicts[name, ulps, seed] for ulps, seed in NOISE}
    for (ulps, seed), (passed, failed, kinds) in runs.items():
        assert passed, f"{name}: no check ran"
        assert failed == expected_failures, (
            f"{name} with {ulps}-ulp noise (seed {seed}): failed {sorted(failed)} ({kinds}), "
            f"expected to fail exactly {sorted(expected_failures)}")
        assert all(kind == "check" for kind in kinds.values()), f"{name}: a failure that is not a verdict: {kinds}"
    assert len({frozenset(passed) for passed, _, _ in runs.values()}) == 1, f"{name}: the verdict depends on rounding"
