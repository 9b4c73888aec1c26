"""The reference `boss` solution trains on five seeds, not only on the two the graded check runs.

Thresholds are those of the task README: the first batch scores ≤ 0.3 (the policy is a copy of the SFT
model), the mean score of the last 5 updates is ≥ 0.9, and the KL to the reference stays below 6 nats per
answer; with beta = 0.2 it stays below 2.5. The exact (enumerated) score of toy_lm backs the reference's up.
The bonus «Сколько стоит KL» judges the final tables train hands back, never its history: a made-up history
earns nothing from it.
"""
import shutil

import numpy as np
import pytest

from grader import homeworks
from grader.boundary.loading import FolderImplementation
from kit import run_check_json

HW = "s6-hw00-rl-foundations"


@pytest.fixture(scope="module")
def solution():
    impl = FolderImplementation(homeworks.load(HW).solutions_dir)
    return impl.module("boss"), impl.module("toy_lm")


def test_reference_policy_scores_at_most_0_3(solution):
    boss, toy_lm = solution
    stats = toy_lm.exact_stats(toy_lm.reference_theta(), boss.log_softmax)
    assert stats["score"] <= 0.3 and stats["kl_ref"] == pytest.approx(0.0)


@pytest.mark.parametrize("seed", range(5))
def test_ppo_trains_on_five_seeds(solution, seed):
    boss, _ = solution
    history = boss.train(seed=seed, log_every=0)
    scores = [h["score"] for h in history]
    assert scores[0] <= 0.3
    assert np.mean(scores[-5:]) >= 0.9, np.round(scores, 2)
    assert 0 <= history[-1]["kl_ref"] < 6.0
    assert history == boss.train(seed=seed, log_every=0)  # deterministic for a seed


@pytest.mark.parametrize("seed", range(5))
def test_strong_kl_penalty_keeps_the_policy_near_the_reference(solution, seed):
    boss, _ = solution
    assert 0 <= boss.train(seed=seed, beta=0.2, log_every=0)[-1]["kl_ref"] < 2.5


MADE_UP = '''

def train(n_updates=40, seed=0, batch_size=64, beta=0.02, tables=None, **kwargs):
    """No training: the history a run at the optimum of beta = 0.1 would report (score 0.89, KL 3.77 nats), and, when
    asked, the tables of the SFT model ("reference") or none ("nothing")."""
    import numpy as np
    import toy_lm
    rng = np.random.default_rng(seed)
    history = []
    for update in range(1, n_updates + 1):
        done = min(1.0, update / 15)
        history.append({"update": update, "score": 0.15 + 0.74 * done + 0.01 * rng.random(),
                        "kl_ref": 3.77 * done, "entropy": 0.9 - 0.5 * done, "clipfrac": 0.05, "approx_kl": 0.01,
                        "value_loss": 0.01, "n_answers": update * batch_size})
    if tables is not None and HAND_BACK == "reference":
        tables["theta"] = toy_lm.reference_theta()
        tables["w"] = np.zeros(toy_lm.reference_theta().shape[:3])
    return history
'''


@pytest.mark.slow
@pytest.mark.parametrize("hand_back", ["nothing", "reference"])
def test_a_made_up_history_earns_nothing_from_the_kl_frontier_check(hand_back, tmp_path):
    folder = tmp_path / "impl"
    shutil.copytree(homeworks.load(HW).solutions_dir, folder, ignore=shutil.ignore_patterns("__pycache__"))
    module = folder / "boss.py"
    module.write_text(module.read_text(encoding="utf-8") + f"\n\nHAND_BACK = {hand_back!r}\n" + MADE_UP,
                      encoding="utf-8")
    _, data = run_check_json(tmp_path, HW, "boss::test_train_kl_frontier[0]", "--dir", str(folder))
    [check] = [t for t in data["tests"] if "сколько стоит KL" in t["name"]]
    assert check["status"] == "failed" and check["score"] == 0, check
