"""Graded checks of the part `returns`: the courier robot's worked example and random episodes, against the
explicit sum Σ_t γ^t r_t of the answer key (tests/hw-tiny/key/returns.py; the reference folds the episode
backwards). The random episodes run on hidden seeds too in the instructor's grade (grader.grading.hidden): an oracle
check, the one that opens the function's gate there (grader.grading.runner.gated)."""
import numpy as np

from grader.grading.checks import check_float, graded
from grader.grading.hidden import inputs
from grader.grading.key import answer_key

key = answer_key("returns")


@graded("робот-курьер: r = [1, 0, 2], γ = 0.9", subject="discounted_return")
def test_courier(returns):
    check_float(returns.discounted_return([1.0, 0.0, 2.0], 0.9), 2.62, what="G_0 робота-курьера",
                hint="G_0 = r_0 + γ r_1 + γ² r_2 = 1 + 0.9 · 0 + 0.81 · 2")


@graded("случайные эпизоды длины 1, 5 и 20, γ = 0.95", subject="discounted_return", oracle=True)
@inputs("seed", [0])
def test_random_episodes(returns, seed):
    rng = np.random.default_rng(seed)
    for length in (1, 5, 20):
        rewards = rng.normal(size=length)
        check_float(returns.discounted_return(rewards, 0.95), key.explicit_sum(rewards, 0.95),
                    what=f"G_0 эпизода длины {length}")
