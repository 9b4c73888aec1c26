"""Graded checks of the part `returns`: the courier robot's worked example and random episodes, against the
explicit sum Σ_t γ^t r_t (the reference folds the episode backwards)."""
import numpy as np

from grader.checks import check_float, graded


@graded("робот-курьер: r = [1, 0, 2], γ = 0.9", subject="discounted_return")
def test_courier(returns):
    check_float(returns.discounted_return([1.0, 0.0, 2.0], 0.9), 2.62, what="G_0 робота-курьера",
                hint="G_0 = r_0 + γ r_1 + γ² r_2 = 1 + 0.9 · 0 + 0.81 · 2")


@graded("случайные эпизоды длины 1, 5 и 20, γ = 0.95", subject="discounted_return")
def test_random_episodes(returns):
    rng = np.random.default_rng(0)
    for length in (1, 5, 20):
        rewards = rng.normal(size=length)
        expected = float(np.sum(0.95 ** np.arange(length) * rewards))
        check_float(returns.discounted_return(rewards, 0.95), expected, what=f"G_0 эпизода длины {length}")
