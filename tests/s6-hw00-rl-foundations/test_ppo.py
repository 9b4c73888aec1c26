"""Graded checks of the part `ppo`: TD errors, GAE, the PPO loss (lesson 6.0.3, practice).

Every worked number of the lesson is pinned; randomized cases (@inputs: each also runs on hidden inputs in the
grade) compare against the answer key (tests/s6-hw00-rl-foundations/key/ppo.py, instructor only): oracles written
differently from the reference, and the answers of typical mistakes. The copy reads the key's answers on its public
inputs from answers/ppo.json (grader.grading.key).
"""
import functools

import numpy as np
import pytest

from grader.grading.checks import (
    Defer,
    Mistake,
    attempt,
    check_close,
    check_float,
    check_pair,
    check_that,
    check_unchanged,
    fmt,
    graded,
    matches,
    probe,
    went_through,
)
from grader.grading.hidden import inputs
from grader.grading.key import answer_key

key = answer_key("ppo")
gae_pair = functools.partial(check_pair, names=("advantages", "returns"))  # what gae-like functions return

COURIER_R = [1.0, 0.0, 2.0]
COURIER_V = [2.0, 1.5, 1.0]
GAMMA = 0.9

# A later check hints only at what it can tell apart: when a function it builds on already fails its own checks
# above, it sends the student there first (these probes run only when the check is about to fail).

DEFER_TD = ("сначала исправьте td_errors (проверки «Робот-курьер: TD-ошибки …» выше): GAE накапливает δ_t, "
            "и с неверными δ неверно и Â.")
DEFER_CLIP = ("сначала исправьте ppo_clip_objective (её непройденные проверки выше): {what} строится на "
              "клиппированной цели.")


@probe(False)
def td_ok(ppo):
    return (matches(ppo.td_errors(COURIER_R, COURIER_V, 0.0, GAMMA), [0.35, -0.6, 1.0])
            and matches(ppo.td_errors(COURIER_R, COURIER_V, 3.0, GAMMA), [0.35, -0.6, 3.7]))


def gae_feedback(ppo, got, expected, hint, mistakes):
    """(hint, mistakes) of a failing GAE check: wrong td_errors are named first, when the student's gae uses them."""
    if matches(got, expected) or not went_through(ppo, "gae", "td_errors") or td_ok(ppo):
        return hint, mistakes
    return Defer(DEFER_TD, "td_errors"), None


@probe(False)
def clip_ok(ppo):
    ratio, adv = [c[1] for c in FIVE_CASES], [c[0] for c in FIVE_CASES]
    return all(matches(ppo.ppo_clip_objective(np.log([c[1]]), np.zeros(1), [c[0]]), c[2]) for c in FIVE_CASES) and \
        matches(ppo.ppo_clip_objective(np.log(ratio), np.zeros(5), adv), 0.1)


def single_cases():
    """(Â, ρ) of every single-action case of the lesson and of Spinning Up."""
    return [(c[0], c[1]) for c in FIVE_CASES] + [(a, r) for a, r, _ in SPINNING_UP]


def single_case_mistakes():
    """The answers of every typical mistake on each single-action case (made up front by each check that may need
    them: the key is asked whatever the student's answer)."""
    return [key.clip_mistakes(*_logp(ratio), [adv], unique=False) for adv, ratio in single_cases()]


@probe(None)
def clip_single_diagnosis(ppo, per_case):
    """The mistake of the clipped objective that alone explains the answer on every single-action case of the lesson
    and of Spinning Up (on one case several mistakes coincide, e.g. max instead of min and no clipping), or None."""
    got = [ppo.ppo_clip_objective(*_logp(ratio), [adv]) for adv, ratio in single_cases()]
    names = [name for name in per_case[0] if all(matches(g, m[name]) for g, m in zip(got, per_case))]
    return names[0] if len(names) == 1 else None  # two mistakes explain every case: naming either could be wrong


def clip_case_feedback(ppo, got, value, hint, mistakes, per_case):
    """(hint, mistakes) of a failing single-action clip check: a mistake consistent with all such cases is named."""
    if matches(got, value):
        return hint, mistakes
    name = clip_single_diagnosis(ppo, per_case)
    return hint, ({name: got} if name else None)


def returns_feedback(ppo, adv, ret, known):
    """(hint, mistakes) of a returns check: when the advantages are already wrong, their mistake is named
    (as the returns it gives, Â + V); else the returns' own mistakes. ``known``: key.gae_returns of the inputs."""
    right_adv, right_ret, own, inherited = known
    if matches(ret, right_ret) or matches(adv, right_adv):
        return "returns = advantages + values.", own
    if went_through(ppo, "gae", "td_errors") and not td_ok(ppo):
        return Defer(DEFER_TD, "td_errors"), None
    return Defer("сначала исправьте advantages (проверки «Робот-курьер: преимущества GAE …» выше): returns = "
                 "advantages + values, и с неверными Â неверны и R̂.", "test_gae_courier"), inherited


# ---- TD errors and GAE: the courier robot --------------------------------------------------


@graded("Робот-курьер: TD-ошибки δ = [0.35, −0.6, 1.0]; входы float64 не меняются", subject="td_errors")
def test_td_errors_courier(ppo):
    got = ppo.td_errors(COURIER_R, COURIER_V, 0.0, GAMMA)
    check_close(got, [0.35, -0.6, 1.0], what="td_errors для робота-курьера (r = [1, 0, 2], V = [2, 1.5, 1], γ = 0.9)",
                hint="δ_t = r_t + γ·V(s_{t+1}) − V(s_t); V(s_{t+1}) — следующий элемент values, у последнего шага — "
                     "last_value.",
                mistakes=key.td_mistakes(COURIER_R, COURIER_V, 0.0, GAMMA))
    # float64 arrays: np.asarray(x, dtype=float) is the caller's array itself, so δ must be a new array
    rewards, values = np.array(COURIER_R), np.array(COURIER_V)
    got = ppo.td_errors(rewards, values, 0.0, GAMMA)
    check_unchanged(np.array(COURIER_R), rewards, name="rewards", function="td_errors")
    check_unchanged(np.array(COURIER_V), values, name="values", function="td_errors")
    check_close(got, [0.35, -0.6, 1.0], what="td_errors для робота-курьера, r и V — массивы float64",
                hint="δ_t = r_t + γ·V(s_{t+1}) − V(s_t) — новый массив, входы не меняются.",
                mistakes=key.td_mistakes(COURIER_R, COURIER_V, 0.0, GAMMA))


@graded("Робот-курьер: last_value после оборванного эпизода входит в δ последнего шага", subject="td_errors")
def test_td_errors_last_value(ppo):
    got = ppo.td_errors(COURIER_R, COURIER_V, 3.0, GAMMA)
    check_close(got, [0.35, -0.6, 3.7], what="td_errors(r, V, last_value=3, γ=0.9)",
                hint="V(s_T) = last_value: для последнего шага δ_{T−1} = r_{T−1} + γ·last_value − V(s_{T−1}).",
                mistakes=key.td_mistakes(COURIER_R, COURIER_V, 3.0, GAMMA))


COURIER_TABLE = {0.0: [0.35, -0.6, 1.0], 0.5: [0.2825, -0.15, 1.0], 0.95: [0.568025, 0.255, 1.0], 1.0: [0.62, 0.3, 1.0]}


@graded("Робот-курьер: преимущества GAE при λ = {lam} (таблица урока)", subject="gae")
@pytest.mark.parametrize("lam", list(COURIER_TABLE), ids=[f"lam{x}" for x in COURIER_TABLE])
def test_gae_courier(ppo, lam):
    adv, _ = gae_pair(ppo.gae(COURIER_R, COURIER_V, 0.0, GAMMA, lam), "gae возвращает (advantages, returns)")
    hint, mistakes = gae_feedback(ppo, adv, COURIER_TABLE[lam],
                                  "Â_t = δ_t + γλ·Â_{t+1}, проход с конца траектории, Â_T = 0.",
                                  key.gae_mistakes([0.35, -0.6, 1.0], GAMMA, lam))
    check_close(adv, COURIER_TABLE[lam], what=f"gae для робота-курьера, γ = 0.9, λ = {lam}: advantages", hint=hint,
                mistakes=mistakes)


@graded("Робот-курьер: цели критика R̂ = Â + V; при λ = 1 это отдачи G = [2.62, 1.8, 2]", subject="gae")
def test_gae_returns_courier(ppo):
    known = key.gae_returns(COURIER_R, COURIER_V, 0.0, GAMMA, 1.0)
    adv, ret = gae_pair(ppo.gae(COURIER_R, COURIER_V, 0.0, GAMMA, 1.0), "gae возвращает (advantages, returns)")
    hint, mistakes = returns_feedback(ppo, adv, ret, known)
    check_close(ret, [2.62, 1.8, 2.0], what="returns из gae при λ = 1 (должны совпасть с отдачами G_t)",
                hint=hint, mistakes=mistakes)
    check_close(adv, COURIER_TABLE[1.0], what="при λ = 1 advantages = G_t − V(s_t)")


@graded("Робот-курьер: returns = Â + V при λ = 0.5", subject="gae")
def test_gae_returns_lam05(ppo):
    known = key.gae_returns(COURIER_R, COURIER_V, 0.0, GAMMA, 0.5)
    adv, ret = gae_pair(ppo.gae(COURIER_R, COURIER_V, 0.0, GAMMA, 0.5), "gae возвращает (advantages, returns)")
    hint, mistakes = returns_feedback(ppo, adv, ret, known)
    check_close(ret, [2.2825, 1.35, 2.0], what="returns из gae при λ = 0.5", hint=hint, mistakes=mistakes)


@graded("n-шаговая оценка: Â_0^(2) = r_0 + γr_1 + γ²V(s_2) − V(s_0) = δ_0 + γδ_1 = −0.19", subject="td_errors")
def test_n_step_identity(ppo):
    direct = key.n_step_advantage(COURIER_R, COURIER_V, 0.0, GAMMA, t=0, n=2)
    check_float(direct, -0.19, what="оракул теста: двухшаговая оценка из наград и V")  # guards the oracle itself
    mistakes = key.two_step_mistakes(COURIER_R, COURIER_V, 0.0, GAMMA)
    delta = np.asarray(ppo.td_errors(COURIER_R, COURIER_V, 0.0, GAMMA), dtype=float)
    got = delta[0] + GAMMA * delta[1]
    ok = matches(got, -0.19) or td_ok(ppo)
    check_float(got, -0.19, what="δ_0 + γ·δ_1 из ваших td_errors",
                hint="промежуточные V сокращаются: сумма первых n TD-ошибок равна n-шаговой оценке." if ok else
                Defer("сначала исправьте td_errors (проверки «Робот-курьер: TD-ошибки …» выше): здесь складываются те "
                      "же δ.", "test_td_errors_courier", "test_td_errors_last_value"),
                mistakes=mistakes)


@graded("Смесь n-шаговых оценок: 0.5·Â(1) + 0.25·Â(2) + 0.25·Â(3) = 0.2825 = GAE при λ = 0.5", subject="gae")
def test_lambda_mixture_courier(ppo):
    mixture = key.gae_lambda_mixture(COURIER_R, COURIER_V, 0.0, GAMMA, 0.5)
    check_float(mixture[0], 0.2825, what="оракул теста: λ-смесь n-шаговых оценок")  # guards the oracle itself
    adv, _ = gae_pair(ppo.gae(COURIER_R, COURIER_V, 0.0, GAMMA, 0.5), "gae возвращает (advantages, returns)")
    hint, mistakes = gae_feedback(ppo, adv, mixture, "GAE — взвешенное среднее n-шаговых оценок с весами (1−λ)λ^{n−1}.",
                                  key.gae_mistakes([0.35, -0.6, 1.0], GAMMA, 0.5))
    check_close(adv, mixture, what="gae при λ = 0.5 против λ-смеси n-шаговых оценок", hint=hint, mistakes=mistakes)


@graded("Вопрос 2 из «Проверь себя»: δ = [0.1, 0.3, 0.1], γ = 1, λ = 0.5 → Â_0 = 0.275", subject="gae")
def test_quiz_question_2(ppo):
    values = np.array([0.4, -0.2, 0.7])
    delta = np.array([0.1, 0.3, 0.1])
    rewards = delta - np.append(values[1:], 0.0) + values  # такие награды, что δ_t = r_t + V(s_{t+1}) − V(s_t)
    adv, _ = gae_pair(ppo.gae(rewards, values, 0.0, 1.0, 0.5), "gae возвращает (advantages, returns)")
    hint, mistakes = gae_feedback(ppo, adv, [0.275, 0.35, 0.1],
                                  "Â_t = δ_t + γλ·Â_{t+1}: Â_2 = 0.1, Â_1 = 0.3 + 0.5·0.1, Â_0 = 0.1 + 0.5·0.35.",
                                  key.gae_mistakes(delta, 1.0, 0.5))
    check_close(adv, [0.275, 0.35, 0.1], what="gae для вопроса 2 (γ = 1, λ = 0.5)", hint=hint, mistakes=mistakes)


def random_trajectory(seed):
    """(rewards, values, last_value, γ, λ) of a random trajectory of 5–29 steps."""
    rng = np.random.default_rng(seed)
    T = int(rng.integers(5, 30))
    rewards, values = rng.normal(size=T), rng.normal(size=T)
    return rewards, values, float(rng.normal()), float(rng.uniform(0.8, 1.0)), float(rng.uniform(0.0, 1.0))


@graded("TD-ошибки на случайных траекториях против δ_t = r_t + γ·V(s_{t+1}) − V(s_t) (seed {seed})",
        subject="td_errors", oracle=True)
@inputs("seed", [0, 1, 2])
def test_td_errors_random(ppo, seed):
    rewards, values, last_value, gamma, _ = random_trajectory(seed)
    # copies: whether the inputs are left unchanged is the business of the checks of inputs, not of this one
    check_close(ppo.td_errors(rewards.copy(), values.copy(), last_value, gamma),
                key.deltas_oracle(rewards, values, last_value, gamma), what=f"td_errors, T = {len(rewards)}",
                hint="δ_t = r_t + γ·V(s_{t+1}) − V(s_t); V(s_{t+1}) — следующий элемент values, у последнего шага — "
                     "last_value.",
                mistakes=key.td_mistakes(rewards, values, last_value, gamma))


@graded("GAE на случайных траекториях против явной суммы Σ(γλ)^l δ_{t+l} (seed {seed})", subject="gae", oracle=True)
@inputs("seed", [0, 1, 2])
def test_gae_random(ppo, seed):
    rewards, values, last_value, gamma, lam = random_trajectory(seed)
    T = len(rewards)
    delta = key.deltas_oracle(rewards, values, last_value, gamma)
    expected = key.gae_explicit_sum(delta, gamma, lam)
    mixture = key.gae_lambda_mixture(rewards, values, last_value, gamma, lam)
    mistakes = key.gae_mistakes(delta, gamma, lam)
    known = key.gae_returns(rewards, values, last_value, gamma, lam)
    adv, ret = gae_pair(ppo.gae(rewards.copy(), values.copy(), last_value, gamma, lam),
                        "gae возвращает (advantages, returns)")
    hint, mistakes = gae_feedback(ppo, adv, expected, "Â_t = δ_t + γλ·Â_{t+1}, проход с конца траектории, Â_T = 0.",
                                  mistakes)
    check_close(adv, expected, what=f"gae, T = {T}, γ = {gamma:.3f}, λ = {lam:.3f}: advantages", hint=hint,
                mistakes=mistakes)
    check_close(adv, mixture, what="gae против λ-смеси n-шаговых оценок")
    hint, mistakes = returns_feedback(ppo, adv, ret, known)
    check_close(ret, known[1], what="gae: returns = advantages + values", hint=hint, mistakes=mistakes)


@graded("GAE принимает списки, float32 и целые награды, не меняет входы (и float64)", subject="gae", oracle=True)
@inputs("seed", [7])
def test_gae_types_and_inputs(ppo, seed):
    rng = np.random.default_rng(seed)
    rewards, values = rng.normal(size=12).astype(np.float32), rng.normal(size=12).astype(np.float32)
    r_copy, v_copy = rewards.copy(), values.copy()
    delta = key.deltas_oracle(rewards, values, 0.5, 0.99)
    expected = key.gae_explicit_sum(delta, 0.99, 0.95)
    known_mistakes = key.gae_mistakes(delta, 0.99, 0.95)
    right = COURIER_TABLE[0.5]
    courier_mistakes = key.gae_mistakes([0.35, -0.6, 1.0], GAMMA, 0.5)
    # The hints about types speak only when the float64 answer is right; otherwise the mistake is elsewhere.
    feedback = []

    def hint_for(got, text):
        if matches(got, expected, 1e-4):
            return text, None
        if not feedback:
            adv64 = attempt(None, lambda: ppo.gae(rewards.astype(float), values.astype(float), 0.5, 0.99, 0.95)[0])
            feedback.append(matches(adv64, expected, 1e-4))
        if feedback[0]:
            return text, None
        defer = Defer("сначала исправьте проверки GAE выше: и на массивах float64 ответ неверен, так что дело не в "
                      "типах входов.", "test_gae_courier", "test_gae_random")
        hint, mistakes = gae_feedback(ppo, got, expected, defer, known_mistakes)
        return hint, mistakes

    adv, _ = gae_pair(ppo.gae(rewards, values, np.float32(0.5), 0.99, 0.95), "gae на float32")
    check_unchanged(r_copy, rewards, name="rewards", function="gae")
    check_unchanged(v_copy, values, name="values", function="gae")
    hint, mistakes = hint_for(adv, "на float64 ответ верен, а на float32 — нет: приводите входы к числам "
                                   "np.asarray(x, dtype=float); last_value может быть np.float32.")
    check_close(adv, expected, what="gae на массивах float32", atol=1e-4, rtol=1e-4, hint=hint, mistakes=mistakes)
    adv, _ = gae_pair(ppo.gae(rewards.tolist(), values.tolist(), 0.5, 0.99, 0.95), "gae на списках")
    hint, mistakes = hint_for(adv, "на массивах ответ верен, а на списках — нет: список нельзя сдвигать и умножать как "
                                   "массив, сначала np.asarray(rewards, dtype=float).")
    check_close(adv, expected, what="gae на обычных списках Python", atol=1e-4, rtol=1e-4, hint=hint, mistakes=mistakes)
    r64, v64 = rewards.astype(float), values.astype(float)  # np.asarray(x, dtype=float) makes no copy of these
    adv, _ = gae_pair(ppo.gae(r64, v64, 0.5, 0.99, 0.95), "gae на float64")
    check_unchanged(rewards.astype(float), r64, name="rewards", function="gae")
    check_unchanged(values.astype(float), v64, name="values", function="gae")
    check_close(adv, expected, what="gae на массивах float64", atol=1e-9,
                hint="Â_t = δ_t + γλ·Â_{t+1}, проход с конца.", mistakes=known_mistakes)
    for ints, text in (([1, 0, 2], "список целых чисел"), (np.array([1, 0, 2], dtype=np.int64), "массив np.int64")):
        adv, _ = gae_pair(ppo.gae(ints, COURIER_V, 0.0, GAMMA, 0.5), "gae с целыми наградами")
        hint = ("награды бывают целыми: приводите их к float — np.asarray(rewards, dtype=float); массив, созданный как "
                "zeros_like от целых наград, тоже целый и округляет Â_t.")
        mistakes = {"advantages — целый массив (zeros_like от целых наград): Â_t округлены до целых":
                    np.trunc(right)}
        if not matches(adv, right) and not matches(
                attempt(None, lambda: ppo.gae(COURIER_R, COURIER_V, 0.0, GAMMA, 0.5)[0]), right):
            hint, mistakes = gae_feedback(ppo, adv, right, Defer("сначала исправьте проверки «Робот-курьер: "
                                                                 "преимущества GAE …» выше: и с наградами float ответ "
                                                                 "неверен, так что дело не в типе наград.",
                                                                 "test_gae_courier"),
                                          courier_mistakes)
        check_close(adv, right, what=f"gae для робота-курьера при λ = 0.5, награды r = [1, 0, 2] — {text}",
                    hint=hint, mistakes=mistakes)


# ---- the clipped objective ----------------------------------------------------------------

FIVE_CASES = [  # (Â, ρ, min(ρÂ, clip(ρ)Â), d(цель)/d(log π))
    (1.0, 1.1, 1.1, 1.1),
    (1.0, 1.5, 1.2, 0.0),
    (1.0, 0.5, 0.5, 0.5),
    (-1.0, 0.7, -0.8, 0.0),
    (-1.0, 1.5, -1.5, -1.5),
]


def _logp(ratio):
    return np.log(np.atleast_1d(np.asarray(ratio, float))), np.zeros(np.size(ratio))


@graded("Пять случаев клиппинга: Â = {adv:+g}, ρ = {ratio} → {value:+g}", subject="ppo_clip_objective")
@pytest.mark.parametrize("adv,ratio,value", [c[:3] for c in FIVE_CASES],
                         ids=[f"A{c[0]:+g}_rho{c[1]}" for c in FIVE_CASES])
def test_clip_five_cases(ppo, adv, ratio, value):
    new, old = _logp(ratio)
    mistakes, per_case = key.clip_mistakes(new, old, [adv]), single_case_mistakes()
    got = ppo.ppo_clip_objective(new, old, [adv])
    hint, mistakes = clip_case_feedback(ppo, got, value, "min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â); ρ = exp(logp_new − logp_old).",
                                        mistakes, per_case)
    check_float(got, value, what=f"ppo_clip_objective для одного действия: Â = {adv:+g}, ρ = {ratio}, ε = 0.2",
                hint=hint, mistakes=mistakes)


@graded("Пять случаев клиппинга вместе: среднее ≈ 0.1 (пример из практики урока)", subject="ppo_clip_objective")
def test_clip_five_cases_mean(ppo):
    ratio = [c[1] for c in FIVE_CASES]
    adv = [c[0] for c in FIVE_CASES]
    mistakes = key.clip_mistakes(np.log(ratio), np.zeros(5), adv)
    got = ppo.ppo_clip_objective(np.log(ratio), np.zeros(5), adv)
    hint = "цель — среднее (mean) по батчу, одно число."
    if not matches(got, 0.1) and not matches(got, 0.5):  # 0.5: the sum instead of the mean
        hint = "mean(min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â)) по пяти действиям."
    check_float(got, 0.1, what="ppo_clip_objective(log[1.1, 1.5, 0.5, 0.7, 1.5], 0, [1, 1, 1, −1, −1])",
                hint=hint, mistakes=mistakes)


SPINNING_UP = [(2.0, 1.5, 2.4), (-1.0, 0.5, -0.8), (2.0, 0.9, 1.8)]


@graded("Примеры Spinning Up: Â = {adv:+g}, ρ = {ratio} → {value:+g}", subject="ppo_clip_objective")
@pytest.mark.parametrize("adv,ratio,value", SPINNING_UP, ids=[f"A{a:+g}_rho{r}" for a, r, _ in SPINNING_UP])
def test_clip_spinning_up(ppo, adv, ratio, value):
    new, old = _logp(ratio)
    mistakes, per_case = key.clip_mistakes(new, old, [adv]), single_case_mistakes()
    got = ppo.ppo_clip_objective(new, old, [adv])
    hint, mistakes = clip_case_feedback(ppo, got, value, "min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â): при Â > 0 выгода ограничена "
                                        "(1+ε)·Â, при Â < 0 — (1−ε)·Â.", mistakes, per_case)
    check_float(got, value, what=f"ppo_clip_objective: Â = {adv:+g}, ρ = {ratio}, ε = 0.2", hint=hint,
                mistakes=mistakes)


@graded("В клиппированной области градиент цели по log π равен нулю, в остальных — ρ·Â (конечные разности)",
        subject="ppo_clip_objective")
def test_clip_gradient(ppo):
    ratio = np.array([c[1] for c in FIVE_CASES])
    adv = np.array([c[0] for c in FIVE_CASES])
    expected = np.array([c[3] for c in FIVE_CASES])
    logp_new, logp_old = np.log(ratio), np.zeros(5)
    h = 1e-6
    grad = np.zeros(5)
    for i in range(5):
        up, down = logp_new.copy(), logp_new.copy()
        up[i] += h
        down[i] -= h
        f_up = ppo.ppo_clip_objective(up, logp_old, adv)
        f_down = ppo.ppo_clip_objective(down, logp_old, adv)
        check_that(f_up is not None and f_down is not None, what="ppo_clip_objective возвращает число",
                   got="None", hint="функция ничего не вернула — допишите return.")
        grad[i] = 5 * (float(f_up) - float(f_down)) / (2 * h)  # ×5: цель — среднее по пяти действиям
    hint = ("градиент есть, только когда min выбирает ветку ρ·Â; когда выбрана clip(ρ)·Â, он равен нулю. "
            "Проверьте, что берёте min, а не max, и клиппите ρ, а не Â.")
    if not matches(grad, expected, 1e-4) and not clip_ok(ppo):
        hint = Defer(DEFER_CLIP.format(what="её градиент"), "test_clip_five_cases", "test_clip_five_cases_mean")
    check_close(grad, expected, what="d(цель)/d(logp_new) для пяти случаев, умноженная на размер батча",
                hint=hint, atol=1e-4, rtol=1e-4)


@graded("Клиппированная цель на случайных батчах против формы g(ε, Â) из Spinning Up; входы не меняются (seed {seed})",
        subject="ppo_clip_objective", oracle=True)
@inputs("seed", [0, 1])
def test_clip_random(ppo, seed):
    rng = np.random.default_rng(100 + seed)
    B = 64
    logp_old = rng.normal(-1.5, 0.5, size=B)
    logp_new = logp_old + rng.normal(0, 0.3, size=B)
    adv = rng.normal(size=B)
    eps = float(rng.uniform(0.1, 0.3))
    expected = key.clip_objective(logp_new, logp_old, adv, eps)
    at_02 = key.clip_objective(logp_new, logp_old, adv, 0.2)
    hint, mistakes = ("mean(min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â)) с переданным eps.",
                      key.clip_mistakes(logp_new, logp_old, adv, eps))
    args = [x.copy() for x in (logp_new, logp_old, adv)]  # float64: np.asarray(x, dtype=float) makes no copy
    got = ppo.ppo_clip_objective(*args, eps=eps)
    for name, before, after in zip(["logp_new", "logp_old", "adv"], (logp_new, logp_old, adv), args):
        check_unchanged(before, after, name=name, function="ppo_clip_objective")
    if not matches(got, expected) and not matches(got, at_02):
        at_default = attempt(None, ppo.ppo_clip_objective, logp_new, logp_old, adv)
        if not matches(at_default, at_02):
            said = "и при ε = 0.2 на этом батче ответ неверен, так что дело не в eps: "
            hint = (Defer(said + "сначала исправьте проверки клиппинга выше.", "test_clip_five_cases",
                          "test_clip_five_cases_mean", "test_clip_spinning_up") if not clip_ok(ppo) else
                    said + "mean(min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â)), ρ = exp(logp_new − logp_old).")
    elif not matches(got, expected):
        hint = "ε передаётся аргументом eps — не 0.2 всегда."
    check_float(got, expected, what=f"ppo_clip_objective, B = {B}, ε = {eps:.3f}", hint=hint, mistakes=mistakes)


QUOTIENT = ("ρ посчитано как частное exp(logp_new) / exp(logp_old): при log π < −745 обе экспоненты в float64 равны 0, "
            "и 0/0 = NaN. Считайте, как в уроке, ρ = exp(logp_new − logp_old): разность логарифмов конечна.")


def unlikely_batch(seed, B=32):
    """(logp_new, logp_old, adv) of a batch of actions that are almost impossible: log π_old from −900 to −760 (below
    −745, where exp is 0 in float64), log π_new = log π_old + N(0, 0.3), so that ρ is an ordinary number near 1."""
    rng = np.random.default_rng(seed)
    logp_old = -rng.uniform(760, 900, size=B)
    return logp_old + rng.normal(0, 0.3, size=B), logp_old, rng.normal(size=B)


def all_nan(got):
    try:
        return bool(np.all(np.isnan(np.asarray(got, dtype=float))))
    except (TypeError, ValueError):
        return False


@graded("Клиппированная цель для почти невозможных действий: log π ≈ −800 < −745, exp(log π) = 0 в float64, а ρ = "
        "exp(logp_new − logp_old) конечно (seed {seed})", subject="ppo_clip_objective", oracle=True)
@inputs("seed", [13])
def test_clip_unlikely_actions(ppo, seed):
    """log π_old и log π_new ниже −745: сами вероятности в float64 — нули, а их отношение ρ = exp(log π_new −
    log π_old) — обычное число около 1. Частное exp(logp_new) / exp(logp_old) даёт 0/0 = NaN."""
    logp_new, logp_old, adv = unlikely_batch(seed)
    expected = key.clip_objective(logp_new, logp_old, adv, 0.2)
    with np.errstate(all="ignore"):
        got = ppo.ppo_clip_objective(logp_new.copy(), logp_old.copy(), adv.copy())
    hint = "ρ = exp(logp_new − logp_old): разность логарифмов, а не частное вероятностей."
    if not matches(got, expected) and not clip_ok(ppo):
        hint = Defer("сначала исправьте проверки клиппинга выше: ответ неверен уже на обычных log π.",
                     "test_clip_five_cases", "test_clip_five_cases_mean")
    elif all_nan(got):
        hint = Mistake(QUOTIENT)
    check_float(got, expected, what=f"ppo_clip_objective, B = {len(adv)}, log π_old от {logp_old.min():.0f} до "
                                    f"{logp_old.max():.0f}, ε = 0.2", hint=hint)


# ---- advantage normalization --------------------------------------------------------------

NORMALIZED_1234 = [-1.3416407864998738, -0.4472135954999579, 0.4472135954999579, 1.3416407864998738]  # ±3/√5, ±1/√5


@graded("Нормировка преимуществ: [1, 2, 3, 4] → ±1.3416, ±0.4472 (std NumPy, ddof = 0)", subject="normalize_advantages")
def test_normalize_pinned(ppo):
    adv = np.array([1.0, 2.0, 3.0, 4.0])
    before = adv.copy()
    mistakes = key.normalize_mistakes(before)
    got = ppo.normalize_advantages(adv)
    check_unchanged(before, adv, name="adv", function="normalize_advantages")
    check_close(got, NORMALIZED_1234, what="normalize_advantages([1, 2, 3, 4])", atol=1e-6,
                hint="(Â − mean) / (std + eps) с np.std по умолчанию (ddof = 0).", mistakes=mistakes)


@graded("Нормировка преимуществ: eps прибавляется к std; одинаковые преимущества → нули, без NaN",
        subject="normalize_advantages")
def test_normalize_eps(ppo):
    with np.errstate(all="ignore"):
        got = ppo.normalize_advantages(np.full(5, 3.0))
    finite = not matches(np.shape(got), [5]) or bool(np.all(np.isfinite(np.asarray(got, dtype=float))))
    check_that(finite, what="normalize_advantages от пяти одинаковых чисел: без NaN", expected="[0, 0, 0, 0, 0]",
               got=fmt(got), hint=Mistake("eps не прибавлен к std — у одинаковых чисел std = 0, и (Â − mean) / std = "
                                          "0/0 = NaN. Знаменатель — std + eps."))
    check_close(got, np.zeros(5), what="normalize_advantages от пяти одинаковых чисел",
                hint="eps в знаменателе защищает от деления на 0.")
    tiny = np.array([0.0, 2e-8])
    mistakes = key.normalize_mistakes(tiny)
    check_close(ppo.normalize_advantages(tiny.copy()), [-0.5, 0.5],
                what="normalize_advantages([0, 2e−8]): std = 1e−8, eps = 1e−8 → ±0.5", atol=1e-6,
                hint="знаменатель — std + eps (np.std, ddof = 0).", mistakes=mistakes)


@graded("Нормировка преимуществ на случайном батче: среднее 0, std 1, форма сохранена", subject="normalize_advantages",
        oracle=True)
@inputs("seed", [3])
def test_normalize_random(ppo, seed):
    rng = np.random.default_rng(seed)
    adv = rng.normal(2.0, 5.0, size=(8, 4))
    expected, mistakes = key.normalized(adv), key.normalize_mistakes(adv)
    given = adv.copy()  # the answer is judged against the input as it was, not as the call left it
    got = ppo.normalize_advantages(given)
    check_unchanged(adv, given, name="adv", function="normalize_advantages")
    hint = "(Â − mean) / (std + eps), форма ответа — как у входа."
    if not matches(got, expected) and not matches(
            attempt(None, ppo.normalize_advantages, np.array([1.0, 2.0, 3.0, 4.0])), NORMALIZED_1234):
        hint = Defer("сначала исправьте проверку «Нормировка преимуществ: [1, 2, 3, 4] …» выше: ответ неверен уже на "
                     "одном векторе, так что дело не в форме батча.", "test_normalize_pinned")
    check_close(got, expected, what="normalize_advantages для батча формы (8, 4): по всем элементам сразу", hint=hint,
                mistakes=mistakes)


ONE_PASS = ("без сдвига ответ верен, а со сдвигом 10⁸ — нет: знаки теряются при округлении. Так бывает, если дисперсия "
            "посчитана в один проход, E[Â²] − (E[Â])²: оба слагаемых около 10¹⁶, и их разность не хранит разброс в "
            "единицы (или выходит отрицательной, и корень — NaN), или если Â приведены к float32. Сначала вычтите "
            "среднее, потом возводите в квадрат (np.std так и считает), всё во float64.")


@graded("Нормировка преимуществ с большим общим сдвигом (около ±10⁸): std считается от отклонений, E[Â²] − E[Â]² "
        "теряет все знаки (seed {seed})", subject="normalize_advantages", oracle=True)
@inputs("seed", [17])
def test_normalize_large_offset(ppo, seed):
    """Â = c + шум, |c| ≈ 10⁸, разброс шума 0.5–3: нормировка от сдвига не зависит, ответ — нормированный шум.
    Дисперсия как E[Â²] − E[Â]² — разность двух чисел около 10¹⁶ с ошибкой округления в единицы: от разброса в
    единицы ничего не остаётся."""
    rng = np.random.default_rng(seed)
    offset = rng.choice([-1.0, 1.0]) * rng.uniform(0.5e8, 2e8)
    noise = rng.normal(0, rng.uniform(0.5, 3.0), size=(6, 5))
    adv = offset + noise
    expected, without_offset = key.normalized(adv), key.normalized(noise)
    with np.errstate(all="ignore"):
        got = ppo.normalize_advantages(adv.copy())
    hint = ("(Â − mean) / (std + eps) с np.std: сначала отклонения Â − mean, потом их квадраты — так сдвиг уходит "
            "до возведения в квадрат.")
    if not matches(got, expected) and not matches(
            attempt(None, ppo.normalize_advantages, np.array([1.0, 2.0, 3.0, 4.0])), NORMALIZED_1234):
        hint = Defer("сначала исправьте проверку «Нормировка преимуществ: [1, 2, 3, 4] …» выше: ответ неверен уже без "
                     "сдвига.", "test_normalize_pinned")
    elif not matches(got, expected) and matches(attempt(None, ppo.normalize_advantages, noise.copy()), without_offset):
        hint = ONE_PASS  # right on the same batch without the offset: digits lost to it (one pass, or float32)
    check_close(got, expected, atol=1e-6, what=f"normalize_advantages для батча (6, 5) около {adv.mean():.3g}",
                hint=hint)


# ---- the full loss -----------------------------------------------------------------------

FOUR = dict(ratio=[1.2, 0.8, 0.75, 2.0], adv=[1.0, -0.5, 2.0, -1.0], err=[-0.5, 0.0, -1.0, 1.0])


@graded("Клиппированная цель для четырёх действий урока: L^CLIP = 0.075", subject="ppo_clip_objective")
def test_clip_four_actions(ppo):
    new, old = np.log(FOUR["ratio"]), np.zeros(4)
    mistakes = key.clip_mistakes(new, old, FOUR["adv"])
    check_float(ppo.ppo_clip_objective(new, old, FOUR["adv"]), 0.075,
                what="ppo_clip_objective для четырёх действий урока (ε = 0.2)",
                hint="mean(min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â)) по четырём действиям.", mistakes=mistakes)


@graded("Loss PPO для четырёх действий: −0.075 + 0.5·0.5625 − 0.01·1.0 ≈ 0.196", subject="ppo_loss")
def test_ppo_loss_four_actions(ppo):
    returns = np.array([1.0, 2.0, 0.5, -1.0])
    values_pred = returns + np.array(FOUR["err"])
    entropy = np.ones(4)
    new, old = np.log(FOUR["ratio"]), np.zeros(4)
    hint, mistakes = ("L = −L^CLIP + c_v·mean((V − R̂)²) − c_e·mean(H).",
                      key.loss_mistakes(new, old, FOUR["adv"], values_pred, returns, entropy))
    got = ppo.ppo_loss(new, old, FOUR["adv"], values_pred, returns, entropy)
    if not matches(got, 0.19625) and went_through(ppo, "ppo_loss", "ppo_clip_objective") and not clip_ok(ppo):
        hint, mistakes = Defer(DEFER_CLIP.format(what="loss PPO"), "ppo_clip_objective"), None
    check_float(got, 0.19625, what="ppo_loss для примера урока (ε = 0.2, c_v = 0.5, c_e = 0.01)", hint=hint,
                mistakes=mistakes)


@graded("Loss PPO на случайных батчах с другими ε, c_v, c_e (seed {seed})", subject="ppo_loss", oracle=True)
@inputs("seed", [0, 1])
def test_ppo_loss_random(ppo, seed):
    rng = np.random.default_rng(200 + seed)
    B = 32
    logp_old = rng.normal(-1.0, 0.3, size=B)
    logp_new = logp_old + rng.normal(0, 0.25, size=B)
    adv, values_pred, returns = rng.normal(size=B), rng.normal(size=B), rng.normal(size=B)
    entropy = rng.uniform(0.1, 1.5, size=B)
    eps, c_v, c_e = 0.15, 1.0, 0.05
    expected = key.loss(logp_new, logp_old, adv, values_pred, returns, entropy, eps, c_v, c_e)
    at_defaults_expected = key.loss(logp_new, logp_old, adv, values_pred, returns, entropy)
    mistakes = key.loss_mistakes(logp_new, logp_old, adv, values_pred, returns, entropy, eps, c_v, c_e)
    clip_at_eps = key.clip_objective(logp_new, logp_old, adv, eps)
    args = [a.copy() for a in (logp_new, logp_old, adv, values_pred, returns, entropy)]
    got = ppo.ppo_loss(*args, eps=eps, c_v=c_v, c_e=c_e)
    hint = "L = −L^CLIP + c_v·mean((V − R̂)²) − c_e·mean(H) с переданными eps, c_v и c_e."
    if not matches(got, expected) and went_through(ppo, "ppo_loss", "ppo_clip_objective") and not matches(
            attempt(None, ppo.ppo_clip_objective, logp_new.copy(), logp_old.copy(), adv.copy(), eps=eps), clip_at_eps):
        # ppo_clip_objective itself is wrong at this ε (one that ignores eps gives the answer of "eps not passed")
        hint, mistakes = Defer(DEFER_CLIP.format(what="loss PPO"), "ppo_clip_objective"), None
    elif not matches(got, expected):
        at_defaults = attempt(None, ppo.ppo_loss,
                               *[a.copy() for a in (logp_new, logp_old, adv, values_pred, returns, entropy)])
        if matches(at_defaults, at_defaults_expected):
            hint = "используйте переданные eps, c_v и c_e, а не значения по умолчанию."
        elif went_through(ppo, "ppo_loss", "ppo_clip_objective") and not clip_ok(ppo):
            hint, mistakes = Defer(DEFER_CLIP.format(what="loss PPO"), "ppo_clip_objective"), None
        else:
            hint = ("и при значениях по умолчанию ответ на этом батче неверен, так что дело не только в аргументах: "
                    + hint)
    check_float(got, expected, what=f"ppo_loss, B = {B}, ε = {eps}, c_v = {c_v}, c_e = {c_e}", hint=hint,
                mistakes=mistakes)
    for name, before, after in zip(["logp_new", "logp_old", "adv", "values_pred", "returns", "entropy"],
                                   (logp_new, logp_old, adv, values_pred, returns, entropy), args):
        check_unchanged(before, after, name=name, function="ppo_loss")


@graded("Loss PPO для почти невозможных действий: log π ≈ −800 < −745, ρ = exp(logp_new − logp_old) конечно "
        "(seed {seed})", subject="ppo_loss", oracle=True)
@inputs("seed", [19])
def test_ppo_loss_unlikely_actions(ppo, seed):
    """Те же почти невозможные действия, что в проверке клиппированной цели: exp(log π) = 0 в float64, а ρ — число
    около 1. Loss со значениями по умолчанию ε = 0.2, c_v = 0.5, c_e = 0.01."""
    logp_new, logp_old, adv = unlikely_batch(seed)
    rng = np.random.default_rng(1000 + seed)
    values_pred, returns, entropy = rng.normal(size=32), rng.normal(size=32), rng.uniform(0.1, 1.5, size=32)
    expected = key.loss(logp_new, logp_old, adv, values_pred, returns, entropy)
    clip_expected = key.clip_objective(logp_new, logp_old, adv, 0.2)
    with np.errstate(all="ignore"):
        got = ppo.ppo_loss(*[x.copy() for x in (logp_new, logp_old, adv, values_pred, returns, entropy)])
    hint = "ρ = exp(logp_new − logp_old): разность логарифмов, а не частное вероятностей."
    if not matches(got, expected) and went_through(ppo, "ppo_loss", "ppo_clip_objective") and not matches(
            attempt(None, ppo.ppo_clip_objective, logp_new.copy(), logp_old.copy(), adv.copy()), clip_expected):
        hint = Defer(DEFER_CLIP.format(what="loss PPO"), "test_clip_unlikely_actions", "ppo_clip_objective")
    elif all_nan(got):
        hint = Mistake(QUOTIENT)
    check_float(got, expected, what=f"ppo_loss, B = 32, log π_old от {logp_old.min():.0f} до {logp_old.max():.0f}",
                hint=hint)


# ---- GAE over a batch with episode boundaries ---------------------------------------------

BOUNDARY = dict(rewards=[1.0, 0.0, 1.0, 2.0], values=[1.0, 2.0, 0.5, 1.0], next_values=[2.0, 5.0, 1.0, 3.0],
                terminated=[False, True, False, False], truncated=[False, False, False, True])


@graded("Границы эпизодов: terminated не бутстрапит, truncated бутстрапит V(s_{t+1}); рекурсия обрывается "
        "(и с целыми наградами)",
        subject="gae_with_boundaries")
def test_boundaries_hand_made(ppo):
    """γ = 0.9, λ = 0.8 (γλ = 0.72). Шаги 0–1 — эпизод, закончившийся на шаге 1 (terminated);
    шаги 2–3 — эпизод, оборванный лимитом на шаге 3 (truncated).
        δ_0 = 1 + 0.9·2 − 1 = 1.8            δ_1 = 0 + 0 − 2 = −2.0  (конечное состояние: V = 0)
        δ_2 = 1 + 0.9·1 − 0.5 = 1.4          δ_3 = 2 + 0.9·3 − 1 = 3.7  (обрыв: настоящая V(s_4) = 3)
        Â_3 = 3.7;  Â_2 = 1.4 + 0.72·3.7 = 4.064;  Â_1 = −2.0 (эпизод кончился);  Â_0 = 1.8 + 0.72·(−2) = 0.36
        R̂ = Â + V = [1.36, 0.0, 4.564, 4.7]
    """
    mistakes = key.boundary_mistakes(**BOUNDARY, gamma=0.9, lam=0.8, names="hand_made")
    returns_mistakes = key.boundary_returns_mistakes(**BOUNDARY, gamma=0.9, lam=0.8)
    adv, ret = gae_pair(ppo.gae_with_boundaries(**BOUNDARY, gamma=0.9, lam=0.8), "gae_with_boundaries")
    check_close(adv, [0.36, -2.0, 4.064, 3.7],
                what="gae_with_boundaries на батче из двух эпизодов "
                     "(расчёт — в docstring проверки в tests/s6-hw00-rl-foundations/test_ppo.py)",
                hint="δ_t = r_t + γ·V(s_{t+1})·(1 − terminated_t) − V(s_t);  Â_t = δ_t + γλ·(1 − done_t)·Â_{t+1}, "
                     "done = terminated или truncated.",
                mistakes=mistakes)
    check_close(ret, [1.36, 0.0, 4.564, 4.7], what="gae_with_boundaries: returns = advantages + values",
                mistakes=returns_mistakes)
    ints = dict(BOUNDARY, rewards=np.array(BOUNDARY["rewards"], dtype=np.int64))  # [1, 0, 1, 2]: integer rewards
    adv, _ = gae_pair(ppo.gae_with_boundaries(**ints, gamma=0.9, lam=0.8), "gae_with_boundaries")
    check_close(adv, [0.36, -2.0, 4.064, 3.7], what="gae_with_boundaries на том же батче, награды [1, 0, 1, 2] — "
                                                    "массив np.int64",
                hint="награды бывают целыми: приводите их к float — np.asarray(rewards, dtype=float); массив, "
                     "созданный как zeros_like от целых наград, тоже целый и округляет Â_t.",
                mistakes={"advantages — целый массив (zeros_like от целых наград): Â_t округлены до целых":
                          np.trunc([0.36, -2.0, 4.064, 3.7])})


def boundary_batch(rng, shape, end_rate):
    """(rewards, values, next_values, terminated, truncated) of a random batch; about half the ends terminate."""
    rewards, values, next_values = rng.normal(size=shape), rng.normal(size=shape), rng.normal(size=shape)
    ends = rng.random(shape) < end_rate
    terminated = ends & (rng.random(shape) < 0.5)
    return rewards, values, next_values, terminated, ends & ~terminated


@graded("Батч из нескольких эпизодов равен GAE по каждому эпизоду отдельно (seed {seed})",
        subject="gae_with_boundaries", oracle=True)
@inputs("seed", [0, 1, 2])
def test_boundaries_random(ppo, seed):
    rng = np.random.default_rng(300 + seed)
    T = 40
    rewards, values, next_values, terminated, truncated = boundary_batch(rng, T, 0.15)
    gamma, lam = 0.97, float(rng.uniform(0.5, 1.0))
    expected, expected_returns = key.boundary_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    mistakes = key.boundary_mistakes(rewards, values, next_values, terminated, truncated, gamma, lam)
    returns_mistakes = key.boundary_returns_mistakes(rewards, values, next_values, terminated, truncated, gamma, lam)
    inputs = [rewards, values, next_values, terminated, truncated]
    copies = [x.copy() for x in inputs]
    adv, ret = gae_pair(ppo.gae_with_boundaries(*copies, gamma=gamma, lam=lam), "gae_with_boundaries")
    episodes = int((terminated | truncated).sum()) + 1
    check_close(adv, expected, what=f"gae_with_boundaries, T = {T}, эпизодов {episodes}, λ = {lam:.3f}",
                hint="δ_t = r_t + γ·V(s_{t+1})·(1 − terminated_t) − V(s_t);  Â_t = δ_t + γλ·(1 − done_t)·Â_{t+1}, "
                     "done = terminated или truncated.", mistakes=mistakes)
    check_close(ret, expected_returns, what="gae_with_boundaries: returns", mistakes=returns_mistakes)
    for name, before, after in zip(["rewards", "values", "next_values", "terminated", "truncated"], inputs, copies):
        check_unchanged(before, after, name=name, function="gae_with_boundaries")


@graded("Шаг с обоими флагами (terminated и truncated): конечное состояние не бутстрапит, рекурсия обрывается; флаги "
        "bool и 0/1 (seed {seed})", subject="gae_with_boundaries", oracle=True)
@inputs("seed", [23])
def test_boundaries_both_flags(ppo, seed):
    """Лимит шагов может совпасть с концом задачи: Gymnasium тогда отдаёт terminated = truncated = True. Конечное
    состояние будущего не имеет, обрыв его не возвращает: δ_t = r_t − V(s_t), и рекурсия на этом шаге обрывается.
    В батче есть шаги только с terminated, только с truncated и с обоими флагами."""
    rng = np.random.default_rng(seed)
    T = 30
    rewards, values, next_values = rng.normal(size=T), rng.normal(size=T), rng.normal(size=T)
    kind = rng.choice(4, size=T, p=[0.7, 0.1, 0.1, 0.1])  # 0: the episode goes on, 1: terminated, 2: truncated, 3: both
    kind[rng.choice(T - 1, size=3, replace=False)] = [1, 2, 3]  # each kind at least once
    terminated, truncated = np.isin(kind, (1, 3)), np.isin(kind, (2, 3))
    gamma, lam = 0.98, float(rng.uniform(0.6, 0.95))
    expected, expected_returns = key.boundary_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    mistakes = key.boundary_mistakes(rewards, values, next_values, terminated, truncated, gamma, lam, names="both")
    hint = ("terminated и truncated вместе — это конец задачи: δ_t = r_t − V(s_t) (без γ·V(s_{t+1})), и рекурсия "
            "обрывается. Бутстрап — только при truncated без terminated: (1 − terminated_t) в δ, (1 − done_t) в "
            "рекурсии, done = terminated или truncated.")
    where = f"gae_with_boundaries, T = {T}, шаги с обоими флагами: {np.flatnonzero(kind == 3).tolist()}"
    adv, ret = gae_pair(ppo.gae_with_boundaries(rewards.copy(), values.copy(), next_values.copy(), terminated.copy(),
                                                truncated.copy(), gamma, lam), "gae_with_boundaries")
    check_close(adv, expected, what=f"{where}, флаги bool", hint=hint, mistakes=mistakes)
    check_close(ret, expected_returns, what="gae_with_boundaries: returns = advantages + values")
    adv01, _ = gae_pair(ppo.gae_with_boundaries(rewards, values, next_values, terminated.astype(np.int64),
                                                truncated.astype(np.int64), gamma, lam), "gae_with_boundaries")
    check_close(adv01, expected, what=f"{where}, флаги 0/1 (np.int64)",
                hint="флаги бывают и числами 0/1: приведите их к bool (np.asarray(x, dtype=bool)) и берите done = "
                     "terminated | truncated; `~` на целых числах даёт −1 и −2, а terminated + truncated на шаге с "
                     "обоими флагами — 2, и 1 − done = −1.")


@graded("Параллельные среды: форма [T, N] — каждый столбец считается отдельно", subject="gae_with_boundaries",
        oracle=True)
@inputs("seed", [11])
def test_boundaries_parallel(ppo, seed):
    rng = np.random.default_rng(seed)
    T, N = 25, 3
    rewards, values, next_values, terminated, truncated = boundary_batch(rng, (T, N), 0.2)
    expected, expected_returns = key.boundary_gae(rewards, values, next_values, terminated, truncated, 0.99, 0.95)
    flattened = key.boundary_parallel_mistakes(rewards, values, next_values, terminated, truncated, 0.99, 0.95)
    returns_mistakes = key.boundary_returns_mistakes(rewards, values, next_values, terminated, truncated, 0.99, 0.95)
    adv, ret = gae_pair(ppo.gae_with_boundaries(rewards, values, next_values, terminated, truncated, 0.99, 0.95),
                          "gae_with_boundaries для [T, N]")
    hint = "время — ось 0; среды не смешиваются: рекурсия идёт по t для всех столбцов сразу."
    mistakes = None
    if not matches(adv, expected):
        columns = [attempt(None, lambda n=n: ppo.gae_with_boundaries(rewards[:, n], values[:, n], next_values[:, n],
                                                                      terminated[:, n], truncated[:, n], 0.99, 0.95)[0])
                   for n in range(N)]
        if not all(matches(col, expected[:, n]) for n, col in enumerate(columns)):
            hint = Defer("сначала исправьте проверки gae_with_boundaries для одной среды [T] выше: и на отдельных "
                         "столбцах ответ неверен, так что дело не в форме [T, N].", "test_boundaries_hand_made",
                         "test_boundaries_random")
        else:
            mistakes = flattened
    check_close(adv, expected, what=f"gae_with_boundaries для батча формы ({T}, {N})", hint=hint, mistakes=mistakes)
    check_close(ret, expected_returns, what="gae_with_boundaries для [T, N]: returns", mistakes=returns_mistakes)
    adv01, _ = gae_pair(ppo.gae_with_boundaries(rewards, values, next_values, terminated.astype(np.int64),
                                                  truncated.astype(np.int64), 0.99, 0.95), "gae_with_boundaries")
    check_close(adv01, expected, what=f"gae_with_boundaries для [{T}, {N}] с флагами 0/1 (np.int64) вместо True/False",
                hint="флаги бывают и числами 0/1: приведите их к bool (np.asarray(x, dtype=bool)) или пишите 1 − flag; "
                     "`~` на целых числах даёт −1 и −2, а не «не конец».")


@graded("Без концов эпизодов gae_with_boundaries совпадает с gae (last_value — последний элемент next_values)",
        subject="gae_with_boundaries", oracle=True)
@inputs("seed", [5])
def test_boundaries_match_gae(ppo, seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=10)
    rewards = rng.normal(size=10)
    next_values = np.append(values[1:], 0.7)
    flags = np.zeros(10, dtype=bool)
    expected = key.gae_advantages(rewards, values, 0.7, 0.95, 0.9)
    adv, _ = gae_pair(ppo.gae_with_boundaries(rewards, values, next_values, flags, flags, 0.95, 0.9),
                        "gae_with_boundaries")
    check_close(adv, expected, what="gae_with_boundaries на одном эпизоде, который продолжается после батча",
                hint="без концов эпизодов рекурсия идёт через весь батч, а последний шаг бутстрапит V(s_T) — последний "
                     "элемент next_values: это обычный GAE всего батча с last_value = V(s_T).")


# ---- bonus: the clipped value loss ---------------------------------------------------------

VALUE_PINNED = ([1.0, 2.0, 0.5], [0.8, 2.5, 0.5], [1.2, 1.9, 0.0])  # V_pred, V_old, R̂ of the worked example


@graded("Бонус: клиппированный loss критика (labml): пример → 0.075", bonus=True, subject="clipped_value_loss")
def test_clipped_value_loss_pinned(ppo):
    """V_pred = [1, 2, 0.5], V_old = [0.8, 2.5, 0.5], R̂ = [1.2, 1.9, 0], ε = 0.2:
    V_clip = [1.0, 2.3, 0.5];  (V − R̂)² = [0.04, 0.01, 0.25];  (V_clip − R̂)² = [0.04, 0.16, 0.25];
    0.5 · mean(max) = 0.5 · mean([0.04, 0.16, 0.25]) = 0.075.
    """
    mistakes = key.clipped_value_mistakes(*VALUE_PINNED)
    check_float(ppo.clipped_value_loss(*VALUE_PINNED), 0.075,
                what="clipped_value_loss (пример — в docstring проверки в tests/s6-hw00-rl-foundations/test_ppo.py)",
                hint="0.5·mean(max((V − R̂)², (V_old + clip(V − V_old, −ε, ε) − R̂)²)).", mistakes=mistakes)


@graded("Бонус: клиппированный loss критика на случайном батче", bonus=True, subject="clipped_value_loss", oracle=True)
@inputs("seed", [9])
def test_clipped_value_loss_random(ppo, seed):
    rng = np.random.default_rng(seed)
    v_old = rng.normal(size=50)
    v = v_old + rng.normal(0, 0.4, size=50)
    ret = rng.normal(size=50)
    expected, mistakes = key.clipped_value_loss(v, v_old, ret, 0.3), key.clipped_value_mistakes(v, v_old, ret, 0.3)
    check_float(ppo.clipped_value_loss(v, v_old, ret, eps=0.3), expected, what="clipped_value_loss, ε = 0.3",
                hint="ε передаётся аргументом eps; клиппируется разность V − V_old, а не само V.", mistakes=mistakes)
