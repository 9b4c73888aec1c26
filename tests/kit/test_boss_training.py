"""The reference `boss` solution trains on five seeds, not only on the one the graded check runs; the audit of one run
of train (key.train_audit, test_train_audit and test_train_sampling_audit) passes correct trains and rejects every
catalogued mistake that reaches train.

Thresholds are those of the task README: the first batch scores ≤ 0.3 (the policy is a copy of the SFT
model), the mean score of the last 5 updates is ≥ 0.9, and the KL to the reference stays below 6 nats per
answer; with beta = 0.2 it stays below 2.5. The exact (enumerated) score of toy_lm backs the reference's up.
The bonus «Сколько стоит KL» judges the final tables train hands back, never its history: a made-up history
earns nothing from it.
"""
import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

from grader.base import homeworks
from grader.boundary.loading import FolderImplementation
from kit import ROOT, run_check_json

HW = "s6-hw00-rl-foundations"
TESTS = ROOT / "tests" / HW
MUTANTS = ROOT / "tests" / "kit" / "mutants" / HW / "boss"
LOOP_HEAVY = ROOT / "tests" / "kit" / "variants" / HW / "loop_heavy"
# mistakes the audit of one short run cannot tell from a correct train, each rejected by its own function's checks:
# their function is not on the reference train's path (policy_loss, critic_loss and adam_step beside ppo_update's own
# loss, the bonus's kl_optimal_policy and GRPO), or it changes train only through events 3 updates of 32 answers
# rarely hold (an answer shorter than L, logits 1000 apart, gradients below Adam's eps: the frontier's tables and the
# 4 updates of the sampling audit see some of them) or never hold (advantages offset by 10⁸, log π below −745, a
# token_gae called without λ: train passes its own)
AUDIT_BLIND = {
    "adam_moments_in_place", "clip_gradient_not_zeroed", "critic_gradient_without_2", "entropy_grad_without_H",
    "entropy_gradient_sign", "gae_bootstraps_padding", "gae_not_stopped", "grad_onehot_without_probs",
    "grpo_ratios_as_quotients",
    "grad_sign_flipped", "grad_without_ratio", "grpo_advantages_in_place", "kl_entropy_global_max",
    "kl_entropy_in_place", "kl_entropy_log_of_probs", "kl_optimal_beta_multiplies", "kl_optimal_kl_reversed",
    "kl_optimal_sign_flipped", "kl_optimal_without_reference", "log_softmax_eps_in_log", "log_softmax_global_max",
    "log_softmax_of_softmax", "loss_divided_by_all_positions", "loss_max_instead_of_min", "masked_normalize_one_pass",
    "normalize_padding_not_zeroed", "policy_loss_ratio_quotient", "ppo_update_grpo_is_ppo",
    "ppo_update_grpo_without_kl", "ratio_inverted", "sample_lengths_argmax", "sample_logp_not_zero_on_padding",
    "score_at_last_position", "token_gae_default_lambda", "token_gae_zeros_like_rewards", "train_grpo_tile"}


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


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def audit():
    """(the answer key of boss, the graded test module: its audit settings TRAIN_REPLAY and SAMPLING_UPDATES)."""
    return _load("boss_key_under_test", TESTS / "key" / "boss.py"), _load("test_boss_settings", TESTS / "test_boss.py")


def modules(folder: Path, tmp_path: Path, mutant: Path | None = None):
    """boss and toy_lm of ``folder`` (the kit's provided modules beside it), ``mutant`` appended to boss.py."""
    impl = tmp_path / "impl"
    shutil.copytree(homeworks.load(HW).homework_dir, impl, ignore=shutil.ignore_patterns("__pycache__"))
    for path in folder.glob("*.py"):
        shutil.copy(path, impl / path.name)
    if mutant is not None:
        (impl / "boss.py").write_text((impl / "boss.py").read_text(encoding="utf-8") + "\n\n"
                                      + mutant.read_text(encoding="utf-8"), encoding="utf-8")
    loaded = FolderImplementation(impl)
    return loaded.module("boss"), loaded.module("toy_lm")


def audited(boss, lm, key, settings, n_updates, seed):
    """(whether train's history is the audited run's, whether its draws pass the sampling test) for one run."""
    history = boss.train(n_updates=n_updates, seed=seed, log_every=0, **settings)
    rows = np.array([[float(h[k]) for k in key.REPLAY_KEYS] for h in history])
    result = key.train_audit(boss, lm, n_updates, seed, **settings)
    if "problem" in result:
        return False, False
    same = rows.shape == result["rows"].shape and np.allclose(rows, result["rows"], atol=1e-8, rtol=1e-6)
    return same, all(row[-1] for row in result["sampling"])


@pytest.mark.parametrize("folder", [homeworks.load(HW).solutions_dir, LOOP_HEAVY], ids=["reference", "loop_heavy"])
def test_the_audit_passes_a_correct_train_on_every_seed(folder, tmp_path, audit):
    key, settings = audit
    boss, lm = modules(folder, tmp_path)
    for seed in range(4):
        assert audited(boss, lm, key, settings.TRAIN_REPLAY, settings.SAMPLING_UPDATES, seed) == (True, True), seed


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(p for p in MUTANTS.glob("*.py") if p.stem not in AUDIT_BLIND),
                         ids=lambda p: p.stem)
def test_the_audit_of_one_run_rejects_every_mistake_that_reaches_train(path, tmp_path, audit):
    """The graded audit's run (3 updates, seed 7): its history differs from the key's recomputation, its draws fail
    the sampling test, or train fails outright; a train that does nothing and a greedy sampler among them."""
    key, settings = audit
    boss, lm = modules(homeworks.load(HW).solutions_dir, tmp_path, path)
    try:
        with np.errstate(all="ignore"):
            verdict = audited(boss, lm, key, settings.TRAIN_REPLAY, 3, 7)
    except Exception:  # noqa: BLE001 - a train that raises is rejected by the check as well
        return
    assert verdict != (True, True), f"{path.stem}: the audit of one run passes it"


def test_the_blind_list_names_catalogued_mistakes():
    assert AUDIT_BLIND <= {p.stem for p in MUTANTS.glob("*.py")}


@pytest.mark.slow
@pytest.mark.parametrize("mutant,check", [("train_does_nothing", "test_train_audit[7]"),
                                          ("sample_greedy_argmax", "test_train_sampling_audit[8]"),
                                          ("train_kl_penalty_halved", "test_train_audit[7]")])
def test_the_graded_audit_rejects_a_train_that_does_nothing_and_a_greedy_sampler(mutant, check, tmp_path):
    folder = tmp_path / "impl"
    shutil.copytree(homeworks.load(HW).solutions_dir, folder, ignore=shutil.ignore_patterns("__pycache__"))
    module = folder / "boss.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n\n" + (MUTANTS / f"{mutant}.py").read_text(
        encoding="utf-8"), encoding="utf-8")
    _, data = run_check_json(tmp_path, HW, f"boss::{check}", "--dir", str(folder))
    assert data["tests"] and all(t["status"] == "failed" for t in data["tests"]), data["tests"]
