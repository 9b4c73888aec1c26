"""Graded checks of the part `ppo`: TD errors, GAE, the PPO loss (lesson 6.0.3, practice).

Every worked number of the lesson is pinned; randomized cases compare against oracles written
differently from the reference (GAE as the explicit sum Σ(γλ)^l δ_{t+l} and as the λ-mixture of
n-step estimates, the clip as Spinning Up's g(ε, A) form), so that returning the lesson's numbers fails.
"""
import functools

import numpy as np
import pytest

from grader.checks import (
    Defer,
    attempt,
    check_close,
    check_float,
    check_pair,
    check_that,
    check_unchanged,
    graded,
    matches,
    probe,
    went_through,
)
from grader.hidden import inputs
from grader.key import answer_key

key = answer_key("ppo")
gae_pair = functools.partial(check_pair, names=("advantages", "returns"))  # what gae-like functions return

COURIER_R = [1.0, 0.0, 2.0]
COURIER_V = [2.0, 1.5, 1.0]
GAMMA = 0.9

# ---- oracles, written differently from the reference ------------------------------------------


def deltas_oracle(rewards, values, last_value, gamma):
    r, v = np.asarray(rewards, float), np.asarray(values, float)
    return np.array([r[t] + gamma * (v[t + 1] if t + 1 < len(v) else last_value) - v[t] for t in range(len(r))])


def gae_explicit_sum(delta, gamma, lam):
    """Â_t = Σ_l (γλ)^l δ_{t+l}, as one matrix product."""
    T = len(delta)
    power = np.subtract.outer(np.arange(T), np.arange(T)).T  # power[t, k] = k − t
    weights = np.where(power >= 0, (gamma * lam) ** np.clip(power, 0, None), 0.0)
    return weights @ np.asarray(delta, float)


def n_step_advantage(rewards, values, last_value, gamma, t, n):
    """Â_t^(n) = r_t + … + γ^{n−1} r_{t+n−1} + γ^n V(s_{t+n}) − V(s_t); past the end: the full return."""
    r, v = np.asarray(rewards, float), np.asarray(values, float)
    T = len(r)
    steps = min(n, T - t)
    ret = sum(gamma ** k * r[t + k] for k in range(steps))
    bootstrap = v[t + steps] if t + steps < T else last_value
    return ret + gamma ** steps * bootstrap - v[t]


def gae_lambda_mixture(rewards, values, last_value, gamma, lam):
    """Â_t = Σ_n (1−λ)λ^{n−1} Â_t^(n): the tail weight λ^{T−t−1} goes to the full-length estimate."""
    T = len(rewards)
    out = np.zeros(T)
    for t in range(T):
        horizon = T - t
        for n in range(1, horizon):
            out[t] += (1 - lam) * lam ** (n - 1) * n_step_advantage(rewards, values, last_value, gamma, t, n)
        out[t] += lam ** (horizon - 1) * n_step_advantage(rewards, values, last_value, gamma, t, horizon)
    return out


def clip_objective_oracle(ratio, adv, eps):
    """Spinning Up's form: min(ρA, g(ε, A)), g = (1+ε)A for A ≥ 0 and (1−ε)A for A < 0."""
    ratio, adv = np.asarray(ratio, float), np.asarray(adv, float)
    g = np.where(adv >= 0, (1 + eps) * adv, (1 - eps) * adv)
    return float(np.mean(np.minimum(ratio * adv, g)))


def gae_mistakes(delta, gamma, lam):
    """What typical wrong GAE implementations return for these δ."""
    delta = np.asarray(delta, float)
    forward = np.zeros_like(delta)
    running = 0.0
    for t in range(len(delta)):
        running = delta[t] + gamma * lam * running
        forward[t] = running
    return {
        "рекурсия идёт с начала траектории, а нужно с конца (reversed)": forward,
        "в рекурсии только λ, без γ": gae_explicit_sum(delta, 1.0, lam),
        "в рекурсии только γ, без λ": gae_explicit_sum(delta, gamma, 1.0),
        "вернули сами TD-ошибки δ без накопления (в рекурсии Â_t вместо Â_{t+1}?)": delta,
    }


def td_mistakes(rewards, values, last_value, gamma):
    """What typical wrong td_errors return for these arguments."""
    r, v = np.asarray(rewards, float), np.asarray(values, float)
    nxt = np.append(v[1:], last_value)
    return {"γ не умножен на V(s_{t+1})": r + nxt - v,
            "знак перевёрнут: V(s_t) − r_t − γV(s_{t+1})": v - r - gamma * nxt,
            "следующая ценность взята со сдвигом не в ту сторону (V(s_{t−1}) вместо V(s_{t+1}))":
                r + gamma * np.append(last_value, v[:-1]) - v,
            "last_value проигнорирован: после последнего шага всегда 0": r + gamma * np.append(v[1:], 0.0) - v}


def distinct(mistakes, atol=1e-6):
    """Only the mistakes this check can tell apart: two that give the same answer here are both left unnamed."""
    items = [(name, np.asarray(value, dtype=float)) for name, value in mistakes.items()]
    return {name: value for name, value in items
            if not any(other is not value and other.shape == value.shape
                       and np.allclose(other, value, atol=atol, rtol=atol)
                       for _, other in items)}


# A later check hints only at what it can tell apart: when a function it builds on already fails its own checks
# above, it sends the student there first (these probes run only when the check is about to fail).

DEFER_TD = ("сначала исправьте td_errors (проверки «Робот-курьер: TD-ошибки …» выше): GAE накапливает δ_t, "
            "и с неверными δ неверно и Â.")
DEFER_CLIP = ("сначала исправьте ppo_clip_objective (проверки «Пять случаев клиппинга …» выше): {what} строится на "
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


@probe(None)
def clip_single_diagnosis(ppo):
    """The mistake of the clipped objective that alone explains the answer on every single-action case of the lesson
    and of Spinning Up (on one case several mistakes coincide, e.g. max instead of min and no clipping), or None."""
    cases = [(c[0], c[1]) for c in FIVE_CASES] + [(a, r) for a, r, _ in SPINNING_UP]
    got = [ppo.ppo_clip_objective(*_logp(ratio), [adv]) for adv, ratio in cases]
    per_case = [clip_mistakes(*_logp(ratio), [adv], unique=False) for adv, ratio in cases]
    names = [name for name in per_case[0] if all(matches(g, m[name]) for g, m in zip(got, per_case))]
    return names[0] if len(names) == 1 else None  # two mistakes explain every case: naming either could be wrong


def clip_case_feedback(ppo, got, value, hint, mistakes):
    """(hint, mistakes) of a failing single-action clip check: a mistake consistent with all such cases is named."""
    if matches(got, value):
        return hint, mistakes
    name = clip_single_diagnosis(ppo)
    return hint, ({name: got} if name else None)


def clip_mistakes(logp_new, logp_old, adv, eps=0.2, unique=True):
    """What typical wrong clipped objectives return for these arguments (all as the batch mean)."""
    new, old, adv = (np.asarray(x, float) for x in (logp_new, logp_old, adv))
    ratio = np.exp(new - old)
    clip = np.clip(ratio, 1 - eps, 1 + eps)
    out = {"max вместо min": np.mean(np.maximum(ratio * adv, clip * adv)),
           "только клиппированная ветка clip(ρ)·Â": np.mean(clip * adv),
           "без клиппинга: ρ·Â": np.mean(ratio * adv),
           "ρ = logp_new − logp_old без exp": np.mean(np.minimum((new - old) * adv,
                                                                 np.clip(new - old, 1 - eps, 1 + eps) * adv)),
           "ρ перевёрнуто: exp(logp_old − logp_new), а нужно π_new / π_old = exp(logp_new − logp_old)":
               np.mean(np.minimum(adv / ratio, np.clip(1 / ratio, 1 - eps, 1 + eps) * adv)),
           "клиппировано произведение ρ·Â, а нужно само ρ: min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â)":
               np.mean(np.minimum(ratio * adv, np.clip(ratio * adv, 1 - eps, 1 + eps))),
           "сумма вместо среднего": np.sum(np.minimum(ratio * adv, clip * adv)),
           "min взят от самих ρ и clip(ρ), а нужно от произведений: min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â)":
               np.mean(np.minimum(ratio, clip) * adv)}
    if eps != 0.2:
        out["eps не используется: посчитано при ε = 0.2"] = np.mean(np.minimum(
            ratio * adv, np.clip(ratio, 0.8, 1.2) * adv))
    return distinct(out) if unique else out


def returns_feedback(ppo, adv, ret, rewards, values, last_value, gamma, lam):
    """(hint, mistakes) of a returns check: when the advantages are already wrong, their mistake is named
    (as the returns it gives, Â + V); else the returns' own mistakes."""
    values = np.asarray(values, float)
    delta = deltas_oracle(rewards, values, last_value, gamma)
    right = gae_explicit_sum(delta, gamma, lam)
    if matches(ret, right + values) or matches(adv, right):
        return "returns = advantages + values.", {"вернули advantages вместо returns": right,
                                                  "returns = advantages − values": right - values}
    if went_through(ppo, "gae", "td_errors") and not td_ok(ppo):
        return Defer(DEFER_TD, "td_errors"), None
    return Defer("сначала исправьте advantages (проверки «Робот-курьер: преимущества GAE …» выше): returns = "
                 "advantages + values, и с неверными Â неверны и R̂.", "test_gae_courier"), {
        name: wrong + values for name, wrong in gae_mistakes(delta, gamma, lam).items()}


# ---- TD errors and GAE: the courier robot --------------------------------------------------


@graded("Робот-курьер: TD-ошибки δ = [0.35, −0.6, 1.0]; входы float64 не меняются", subject="td_errors")
def test_td_errors_courier(ppo):
    got = ppo.td_errors(COURIER_R, COURIER_V, 0.0, GAMMA)
    check_close(got, [0.35, -0.6, 1.0], what="td_errors для робота-курьера (r = [1, 0, 2], V = [2, 1.5, 1], γ = 0.9)",
                hint="δ_t = r_t + γ·V(s_{t+1}) − V(s_t); V(s_{t+1}) — следующий элемент values, у последнего шага — "
                     "last_value.",
                mistakes=td_mistakes(COURIER_R, COURIER_V, 0.0, GAMMA))
    # float64 arrays: np.asarray(x, dtype=float) is the caller's array itself, so δ must be a new array
    rewards, values = np.array(COURIER_R), np.array(COURIER_V)
    got = ppo.td_errors(rewards, values, 0.0, GAMMA)
    check_unchanged(np.array(COURIER_R), rewards, name="rewards", function="td_errors")
    check_unchanged(np.array(COURIER_V), values, name="values", function="td_errors")
    check_close(got, [0.35, -0.6, 1.0], what="td_errors для робота-курьера, r и V — массивы float64",
                hint="δ_t = r_t + γ·V(s_{t+1}) − V(s_t) — новый массив, входы не меняются.",
                mistakes=td_mistakes(COURIER_R, COURIER_V, 0.0, GAMMA))


@graded("Робот-курьер: last_value после оборванного эпизода входит в δ последнего шага", subject="td_errors")
def test_td_errors_last_value(ppo):
    got = ppo.td_errors(COURIER_R, COURIER_V, 3.0, GAMMA)
    check_close(got, [0.35, -0.6, 1.0 + 0.9 * 3.0], what="td_errors(r, V, last_value=3, γ=0.9)",
                hint="V(s_T) = last_value: для последнего шага δ_{T−1} = r_{T−1} + γ·last_value − V(s_{T−1}).",
                mistakes=td_mistakes(COURIER_R, COURIER_V, 3.0, GAMMA))


COURIER_TABLE = {0.0: [0.35, -0.6, 1.0], 0.5: [0.2825, -0.15, 1.0], 0.95: [0.568025, 0.255, 1.0], 1.0: [0.62, 0.3, 1.0]}


@graded("Робот-курьер: преимущества GAE при λ = {lam} (таблица урока)", subject="gae")
@pytest.mark.parametrize("lam", list(COURIER_TABLE), ids=[f"lam{x}" for x in COURIER_TABLE])
def test_gae_courier(ppo, lam):
    adv, _ = gae_pair(ppo.gae(COURIER_R, COURIER_V, 0.0, GAMMA, lam), "gae возвращает (advantages, returns)")
    hint, mistakes = gae_feedback(ppo, adv, COURIER_TABLE[lam],
                                  "Â_t = δ_t + γλ·Â_{t+1}, проход с конца траектории, Â_T = 0.",
                                  gae_mistakes([0.35, -0.6, 1.0], GAMMA, lam))
    check_close(adv, COURIER_TABLE[lam], what=f"gae для робота-курьера, γ = 0.9, λ = {lam}: advantages", hint=hint,
                mistakes=mistakes)


@graded("Робот-курьер: цели критика R̂ = Â + V; при λ = 1 это отдачи G = [2.62, 1.8, 2]", subject="gae")
def test_gae_returns_courier(ppo):
    adv, ret = gae_pair(ppo.gae(COURIER_R, COURIER_V, 0.0, GAMMA, 1.0), "gae возвращает (advantages, returns)")
    hint, mistakes = returns_feedback(ppo, adv, ret, COURIER_R, COURIER_V, 0.0, GAMMA, 1.0)
    check_close(ret, [2.62, 1.8, 2.0], what="returns из gae при λ = 1 (должны совпасть с отдачами G_t)",
                hint=hint, mistakes=mistakes)
    check_close(adv, np.array([2.62, 1.8, 2.0]) - COURIER_V, what="при λ = 1 advantages = G_t − V(s_t)")


@graded("Робот-курьер: returns = Â + V при λ = 0.5", subject="gae")
def test_gae_returns_lam05(ppo):
    adv, ret = gae_pair(ppo.gae(COURIER_R, COURIER_V, 0.0, GAMMA, 0.5), "gae возвращает (advantages, returns)")
    hint, mistakes = returns_feedback(ppo, adv, ret, COURIER_R, COURIER_V, 0.0, GAMMA, 0.5)
    check_close(ret, [2.2825, 1.35, 2.0], what="returns из gae при λ = 0.5", hint=hint, mistakes=mistakes)


@graded("n-шаговая оценка: Â_0^(2) = r_0 + γr_1 + γ²V(s_2) − V(s_0) = δ_0 + γδ_1 = −0.19", subject="td_errors")
def test_n_step_identity(ppo):
    direct = n_step_advantage(COURIER_R, COURIER_V, 0.0, GAMMA, t=0, n=2)
    check_float(direct, -0.19, what="оракул теста: двухшаговая оценка из наград и V")  # guards the oracle itself
    delta = np.asarray(ppo.td_errors(COURIER_R, COURIER_V, 0.0, GAMMA), dtype=float)
    got = delta[0] + GAMMA * delta[1]
    ok = matches(got, -0.19) or td_ok(ppo)
    check_float(got, -0.19, what="δ_0 + γ·δ_1 из ваших td_errors",
                hint="промежуточные V сокращаются: сумма первых n TD-ошибок равна n-шаговой оценке." if ok else
                Defer("сначала исправьте td_errors (проверки «Робот-курьер: TD-ошибки …» выше): здесь складываются те "
                      "же δ.", "test_td_errors_courier", "test_td_errors_last_value"),
                mistakes={name: wrong[0] + GAMMA * wrong[1]
                          for name, wrong in td_mistakes(COURIER_R, COURIER_V, 0.0, GAMMA).items()})


@graded("Смесь n-шаговых оценок: 0.5·Â(1) + 0.25·Â(2) + 0.25·Â(3) = 0.2825 = GAE при λ = 0.5", subject="gae")
def test_lambda_mixture_courier(ppo):
    mixture = gae_lambda_mixture(COURIER_R, COURIER_V, 0.0, GAMMA, 0.5)
    check_float(mixture[0], 0.2825, what="оракул теста: λ-смесь n-шаговых оценок")  # guards the oracle itself
    adv, _ = gae_pair(ppo.gae(COURIER_R, COURIER_V, 0.0, GAMMA, 0.5), "gae возвращает (advantages, returns)")
    hint, mistakes = gae_feedback(ppo, adv, mixture, "GAE — взвешенное среднее n-шаговых оценок с весами (1−λ)λ^{n−1}.",
                                  gae_mistakes([0.35, -0.6, 1.0], GAMMA, 0.5))
    check_close(adv, mixture, what="gae при λ = 0.5 против λ-смеси n-шаговых оценок", hint=hint, mistakes=mistakes)


@graded("Вопрос 2 из «Проверь себя»: δ = [0.1, 0.3, 0.1], γ = 1, λ = 0.5 → Â_0 = 0.275", subject="gae")
def test_quiz_question_2(ppo):
    values = np.array([0.4, -0.2, 0.7])
    delta = np.array([0.1, 0.3, 0.1])
    rewards = delta - np.append(values[1:], 0.0) + values  # такие награды, что δ_t = r_t + V(s_{t+1}) − V(s_t)
    adv, _ = gae_pair(ppo.gae(rewards, values, 0.0, 1.0, 0.5), "gae возвращает (advantages, returns)")
    hint, mistakes = gae_feedback(ppo, adv, [0.275, 0.35, 0.1],
                                  "Â_t = δ_t + γλ·Â_{t+1}: Â_2 = 0.1, Â_1 = 0.3 + 0.5·0.1, Â_0 = 0.1 + 0.5·0.35.",
                                  gae_mistakes(delta, 1.0, 0.5))
    check_close(adv, [0.275, 0.35, 0.1], what="gae для вопроса 2 (γ = 1, λ = 0.5)", hint=hint, mistakes=mistakes)


def random_trajectory(seed):
    """(rewards, values, last_value, γ, λ) of a random trajectory of 5–29 steps."""
    rng = np.random.default_rng(seed)
    T = int(rng.integers(5, 30))
    rewards, values = rng.normal(size=T), rng.normal(size=T)
    return rewards, values, float(rng.normal()), float(rng.uniform(0.8, 1.0)), float(rng.uniform(0.0, 1.0))


@graded("TD-ошибки на случайных траекториях против δ_t = r_t + γ·V(s_{t+1}) − V(s_t) (seed {seed})",
        subject="td_errors")
@inputs("seed", [0, 1, 2])
def test_td_errors_random(ppo, seed):
    rewards, values, last_value, gamma, _ = random_trajectory(seed)
    # copies: whether the inputs are left unchanged is the business of the checks of inputs, not of this one
    check_close(ppo.td_errors(rewards.copy(), values.copy(), last_value, gamma),
                key.deltas_oracle(rewards, values, last_value, gamma), what=f"td_errors, T = {len(rewards)}",
                hint="δ_t = r_t + γ·V(s_{t+1}) − V(s_t); V(s_{t+1}) — следующий элемент values, у последнего шага — "
                     "last_value.",
                mistakes=key.td_mistakes(rewards, values, last_value, gamma))


@graded("GAE на случайных траекториях против явной суммы Σ(γλ)^l δ_{t+l} (seed {seed})", subject="gae")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gae_random(ppo, seed):
    rewards, values, last_value, gamma, lam = random_trajectory(seed)
    T = len(rewards)
    delta = deltas_oracle(rewards, values, last_value, gamma)
    adv, ret = gae_pair(ppo.gae(rewards.copy(), values.copy(), last_value, gamma, lam),
                        "gae возвращает (advantages, returns)")
    expected = gae_explicit_sum(delta, gamma, lam)
    hint, mistakes = gae_feedback(ppo, adv, expected, "Â_t = δ_t + γλ·Â_{t+1}, проход с конца траектории, Â_T = 0.",
                                  gae_mistakes(delta, gamma, lam))
    check_close(adv, expected, what=f"gae, T = {T}, γ = {gamma:.3f}, λ = {lam:.3f}: advantages", hint=hint,
                mistakes=mistakes)
    check_close(adv, gae_lambda_mixture(rewards, values, last_value, gamma, lam),
                what="gae против λ-смеси n-шаговых оценок")
    hint, mistakes = returns_feedback(ppo, adv, ret, rewards, values, last_value, gamma, lam)
    check_close(ret, expected + values, what="gae: returns = advantages + values", hint=hint, mistakes=mistakes)


@graded("GAE принимает списки, float32 и целые награды, не меняет входы (и float64)", subject="gae")
def test_gae_types_and_inputs(ppo):
    rng = np.random.default_rng(7)
    rewards, values = rng.normal(size=12).astype(np.float32), rng.normal(size=12).astype(np.float32)
    r_copy, v_copy = rewards.copy(), values.copy()
    delta = deltas_oracle(rewards, values, 0.5, 0.99)
    expected = gae_explicit_sum(delta, 0.99, 0.95)
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
        hint, mistakes = gae_feedback(ppo, got, expected, defer, gae_mistakes(delta, 0.99, 0.95))
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
                hint="Â_t = δ_t + γλ·Â_{t+1}, проход с конца.", mistakes=gae_mistakes(delta, 0.99, 0.95))
    right = COURIER_TABLE[0.5]
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
                                          gae_mistakes([0.35, -0.6, 1.0], GAMMA, 0.5))
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
    got = ppo.ppo_clip_objective(new, old, [adv])
    hint, mistakes = clip_case_feedback(ppo, got, value, "min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â); ρ = exp(logp_new − logp_old).",
                                        clip_mistakes(new, old, [adv]))
    check_float(got, value, what=f"ppo_clip_objective для одного действия: Â = {adv:+g}, ρ = {ratio}, ε = 0.2",
                hint=hint, mistakes=mistakes)


@graded("Пять случаев клиппинга вместе: среднее ≈ 0.1 (пример из практики урока)", subject="ppo_clip_objective")
def test_clip_five_cases_mean(ppo):
    ratio = [c[1] for c in FIVE_CASES]
    adv = [c[0] for c in FIVE_CASES]
    got = ppo.ppo_clip_objective(np.log(ratio), np.zeros(5), adv)
    mistakes = clip_mistakes(np.log(ratio), np.zeros(5), adv)
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
    got = ppo.ppo_clip_objective(new, old, [adv])
    hint, mistakes = clip_case_feedback(ppo, got, value, "min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â): при Â > 0 выгода ограничена "
                                        "(1+ε)·Â, при Â < 0 — (1−ε)·Â.", clip_mistakes(new, old, [adv]))
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
        subject="ppo_clip_objective")
@pytest.mark.parametrize("seed", [0, 1])
def test_clip_random(ppo, seed):
    rng = np.random.default_rng(100 + seed)
    B = 64
    logp_old = rng.normal(-1.5, 0.5, size=B)
    logp_new = logp_old + rng.normal(0, 0.3, size=B)
    adv = rng.normal(size=B)
    eps = float(rng.uniform(0.1, 0.3))
    expected = clip_objective_oracle(np.exp(logp_new - logp_old), adv, eps)
    args = [x.copy() for x in (logp_new, logp_old, adv)]  # float64: np.asarray(x, dtype=float) makes no copy
    got = ppo.ppo_clip_objective(*args, eps=eps)
    for name, before, after in zip(["logp_new", "logp_old", "adv"], (logp_new, logp_old, adv), args):
        check_unchanged(before, after, name=name, function="ppo_clip_objective")
    hint, mistakes = ("mean(min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â)) с переданным eps.",
                      clip_mistakes(logp_new, logp_old, adv, eps))
    at_02 = clip_objective_oracle(np.exp(logp_new - logp_old), adv, 0.2)
    if not matches(got, expected) and not matches(got, at_02):
        at_default = attempt(None, ppo.ppo_clip_objective, logp_new, logp_old, adv)
        if not matches(at_default, clip_objective_oracle(np.exp(logp_new - logp_old), adv, 0.2)):
            said = "и при ε = 0.2 на этом батче ответ неверен, так что дело не в eps: "
            hint = (Defer(said + "сначала исправьте проверки клиппинга выше.", "test_clip_five_cases",
                          "test_clip_five_cases_mean", "test_clip_spinning_up") if not clip_ok(ppo) else
                    said + "mean(min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â)), ρ = exp(logp_new − logp_old).")
    elif not matches(got, expected):
        hint = "ε передаётся аргументом eps — не 0.2 всегда."
    check_float(got, expected, what=f"ppo_clip_objective, B = {B}, ε = {eps:.3f}", hint=hint, mistakes=mistakes)


# ---- advantage normalization --------------------------------------------------------------


@graded("Нормировка преимуществ: [1, 2, 3, 4] → ±1.3416, ±0.4472 (std NumPy, ddof = 0)", subject="normalize_advantages")
def test_normalize_pinned(ppo):
    adv = np.array([1.0, 2.0, 3.0, 4.0])
    before = adv.copy()
    pop = (adv - 2.5) / np.sqrt(1.25)
    got = ppo.normalize_advantages(adv)
    check_unchanged(before, adv, name="adv", function="normalize_advantages")
    check_close(got, pop, what="normalize_advantages([1, 2, 3, 4])", atol=1e-6,
                hint="(Â − mean) / (std + eps) с np.std по умолчанию (ddof = 0).", mistakes=normalize_mistakes(before))


@graded("Нормировка преимуществ: eps прибавляется к std; одинаковые преимущества → нули, без NaN",
        subject="normalize_advantages")
def test_normalize_eps(ppo):
    with np.errstate(all="ignore"):
        got = ppo.normalize_advantages(np.full(5, 3.0))
    finite = not matches(np.shape(got), [5]) or bool(np.all(np.isfinite(np.asarray(got, dtype=float))))
    check_that(finite, what="normalize_advantages от пяти одинаковых чисел: без NaN", expected="[0, 0, 0, 0, 0]",
               got=str(got), hint="Похоже на типичную ошибку: eps не прибавлен к std — у одинаковых чисел std = 0, и "
                                  "(Â − mean) / std = 0/0 = NaN. Знаменатель — std + eps.")
    check_close(got, np.zeros(5), what="normalize_advantages от пяти одинаковых чисел",
                hint="eps в знаменателе защищает от деления на 0.")
    tiny = np.array([0.0, 2e-8])
    check_close(ppo.normalize_advantages(tiny.copy()), [-0.5, 0.5],
                what="normalize_advantages([0, 2e−8]): std = 1e−8, eps = 1e−8 → ±0.5", atol=1e-6,
                hint="знаменатель — std + eps (np.std, ddof = 0).", mistakes=normalize_mistakes(tiny))


@graded("Нормировка преимуществ на случайном батче: среднее 0, std 1, форма сохранена", subject="normalize_advantages")
def test_normalize_random(ppo):
    rng = np.random.default_rng(3)
    adv = rng.normal(2.0, 5.0, size=(8, 4))
    given = adv.copy()  # the answer is judged against the input as it was, not as the call left it
    got = ppo.normalize_advantages(given)
    check_unchanged(adv, given, name="adv", function="normalize_advantages")
    expected = (adv - adv.mean()) / (adv.std() + 1e-8)
    mistakes = normalize_mistakes(adv)
    hint = "(Â − mean) / (std + eps), форма ответа — как у входа."
    if not matches(got, expected) and not matches(
            attempt(None, ppo.normalize_advantages, np.array([1.0, 2.0, 3.0, 4.0])),
            (np.arange(1.0, 5.0) - 2.5) / np.sqrt(1.25)):
        hint = Defer("сначала исправьте проверку «Нормировка преимуществ: [1, 2, 3, 4] …» выше: ответ неверен уже на "
                     "одном векторе, так что дело не в форме батча.", "test_normalize_pinned")
    check_close(got, expected, what="normalize_advantages для батча формы (8, 4): по всем элементам сразу", hint=hint,
                mistakes=mistakes)


def normalize_mistakes(adv):
    """What typical wrong normalizations return for this batch."""
    adv = np.asarray(adv, float)
    centred = adv - adv.mean()
    out = {"std с ddof = 1 (как в torch.std), а нужна np.std по умолчанию (ddof = 0)":
           centred / (adv.std(ddof=1) + 1e-8),
           "знаменатель без eps (std или max(std, eps)), а нужно std + eps": centred / max(adv.std(), 1e-8),
           "знаменатель sqrt(var + eps), а нужно std + eps": centred / np.sqrt(adv.var() + 1e-8),
           "забыли вычесть среднее": adv / (adv.std() + 1e-8),
           "делили на дисперсию вместо std": centred / (adv.var() + 1e-8),
           "знаменатель — корень из среднего квадрата самих Â (без вычитания среднего), а нужно std":
               centred / (np.sqrt(np.mean(adv ** 2)) + 1e-8)}
    if adv.ndim == 2:
        out["среднее и std по столбцам (axis=0), а нужно по всему батчу"] = (
            (adv - adv.mean(axis=0)) / (adv.std(axis=0) + 1e-8))
        out["среднее и std по строкам (axis=1), а нужно по всему батчу"] = (
            (adv - adv.mean(axis=1, keepdims=True)) / (adv.std(axis=1, keepdims=True) + 1e-8))
    return distinct(out)


# ---- the full loss -----------------------------------------------------------------------

def loss_oracle(logp_new, logp_old, adv, values_pred, returns, entropy, eps=0.2, c_v=0.5, c_e=0.01):
    return (-clip_objective_oracle(np.exp(np.asarray(logp_new) - logp_old), adv, eps)
            + c_v * np.mean((np.asarray(values_pred) - returns) ** 2) - c_e * np.mean(entropy))


def loss_mistakes(logp_new, logp_old, adv, values_pred, returns, entropy, eps=0.2, c_v=0.5, c_e=0.01):
    """What typical wrong PPO losses return for these arguments."""
    ratio = np.exp(np.asarray(logp_new, float) - logp_old)
    adv, err, entropy = np.asarray(adv, float), np.asarray(values_pred, float) - returns, np.asarray(entropy, float)
    objective = clip_objective_oracle(ratio, adv, eps)
    value, bonus = np.mean(err ** 2), np.mean(entropy)
    normalized = (adv - adv.mean()) / (adv.std() + 1e-8)
    out = {"цель L^CLIP взята с плюсом": objective + c_v * value - c_e * bonus,
           "энтропийный бонус прибавлен, а не вычтен": -objective + c_v * value + c_e * bonus,
           "ошибка критика без квадрата": -objective + c_v * np.mean(err) - c_e * bonus,
           "ошибка критика по модулю, а нужен квадрат": -objective + c_v * np.mean(np.abs(err)) - c_e * bonus,
           "сумма квадратов вместо среднего": -objective + c_v * np.sum(err ** 2) - c_e * bonus,
           "c_v и c_e перепутаны": -objective + c_e * value - c_v * bonus,
           "ppo_loss сам нормирует преимущества (их нормируют до вызова)":
               -clip_objective_oracle(ratio, normalized, eps) + c_v * value - c_e * bonus}
    if (eps, c_v, c_e) != (0.2, 0.5, 0.01):
        if eps != 0.2:
            out["eps не передан в ppo_clip_objective: цель посчитана при ε = 0.2"] = (
                -clip_objective_oracle(ratio, adv, 0.2) + c_v * value - c_e * bonus)
        if c_v != 0.5:
            out["c_v не используется: вес критика 0.5 по умолчанию"] = -objective + 0.5 * value - c_e * bonus
        if c_e != 0.01:
            out["c_e не используется: вес энтропии 0.01 по умолчанию"] = -objective + c_v * value - 0.01 * bonus
    return distinct(out)


FOUR = dict(ratio=[1.2, 0.8, 0.75, 2.0], adv=[1.0, -0.5, 2.0, -1.0], err=[-0.5, 0.0, -1.0, 1.0])


@graded("Клиппированная цель для четырёх действий урока: L^CLIP = 0.075", subject="ppo_clip_objective")
def test_clip_four_actions(ppo):
    new, old = np.log(FOUR["ratio"]), np.zeros(4)
    check_float(ppo.ppo_clip_objective(new, old, FOUR["adv"]), 0.075,
                what="ppo_clip_objective для четырёх действий урока (ε = 0.2)",
                hint="mean(min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â)) по четырём действиям.",
                mistakes=clip_mistakes(new, old, FOUR["adv"]))


@graded("Loss PPO для четырёх действий: −0.075 + 0.5·0.5625 − 0.01·1.0 ≈ 0.196", subject="ppo_loss")
def test_ppo_loss_four_actions(ppo):
    returns = np.array([1.0, 2.0, 0.5, -1.0])
    values_pred = returns + np.array(FOUR["err"])
    entropy = np.ones(4)
    new, old = np.log(FOUR["ratio"]), np.zeros(4)
    got = ppo.ppo_loss(new, old, FOUR["adv"], values_pred, returns, entropy)
    hint, mistakes = ("L = −L^CLIP + c_v·mean((V − R̂)²) − c_e·mean(H).",
                      loss_mistakes(new, old, FOUR["adv"], values_pred, returns, entropy))
    if not matches(got, 0.19625) and went_through(ppo, "ppo_loss", "ppo_clip_objective") and not clip_ok(ppo):
        hint, mistakes = Defer(DEFER_CLIP.format(what="loss PPO"), "ppo_clip_objective"), None
    check_float(got, 0.19625, what="ppo_loss для примера урока (ε = 0.2, c_v = 0.5, c_e = 0.01)", hint=hint,
                mistakes=mistakes)


@graded("Loss PPO на случайных батчах с другими ε, c_v, c_e (seed {seed})", subject="ppo_loss")
@pytest.mark.parametrize("seed", [0, 1])
def test_ppo_loss_random(ppo, seed):
    rng = np.random.default_rng(200 + seed)
    B = 32
    logp_old = rng.normal(-1.0, 0.3, size=B)
    logp_new = logp_old + rng.normal(0, 0.25, size=B)
    adv, values_pred, returns = rng.normal(size=B), rng.normal(size=B), rng.normal(size=B)
    entropy = rng.uniform(0.1, 1.5, size=B)
    eps, c_v, c_e = 0.15, 1.0, 0.05
    expected = (-clip_objective_oracle(np.exp(logp_new - logp_old), adv, eps)
                + c_v * np.mean((values_pred - returns) ** 2) - c_e * np.mean(entropy))
    args = [a.copy() for a in (logp_new, logp_old, adv, values_pred, returns, entropy)]
    got = ppo.ppo_loss(*args, eps=eps, c_v=c_v, c_e=c_e)
    hint = "L = −L^CLIP + c_v·mean((V − R̂)²) − c_e·mean(H) с переданными eps, c_v и c_e."
    mistakes = loss_mistakes(logp_new, logp_old, adv, values_pred, returns, entropy, eps, c_v, c_e)
    if not matches(got, expected):
        at_defaults = attempt(None, ppo.ppo_loss,
                               *[a.copy() for a in (logp_new, logp_old, adv, values_pred, returns, entropy)])
        if matches(at_defaults, loss_oracle(logp_new, logp_old, adv, values_pred, returns, entropy)):
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


# ---- GAE over a batch with episode boundaries ---------------------------------------------

BOUNDARY = dict(rewards=[1.0, 0.0, 1.0, 2.0], values=[1.0, 2.0, 0.5, 1.0], next_values=[2.0, 5.0, 1.0, 3.0],
                terminated=[False, True, False, False], truncated=[False, False, False, True])


def boundary_oracle(rewards, values, next_values, terminated, truncated, gamma, lam):
    """Split the rollout into episodes, and sum (γλ)^l δ within each one."""
    r, v, vn = (np.asarray(x, float) for x in (rewards, values, next_values))
    term, trunc = np.asarray(terminated, bool), np.asarray(truncated, bool)
    delta = r + gamma * np.where(term, 0.0, vn) - v
    adv = np.zeros_like(delta)
    start = 0
    for end in range(len(r)):
        if term[end] or trunc[end] or end == len(r) - 1:
            adv[start:end + 1] = gae_explicit_sum(delta[start:end + 1], gamma, lam)
            start = end + 1
    return adv


VALUES_SHIFTED = ("V(s_{t+1}) взята из values[t + 1], а не из next_values[t]: после оборванного шага values[t + 1] — "
                  "ценность первого наблюдения нового эпизода, "
                  "а бутстрапить нужно то наблюдение, на котором эпизод оборван")


def values_shifted(rewards, values, next_values, terminated, truncated, gamma, lam):
    """GAE whose V(s_{t+1}) is values[t + 1] (next_values only after the batch's last step)."""
    v = np.asarray(values, float)
    shifted = np.concatenate([v[1:], np.asarray(next_values, float)[-1:]])
    return boundary_oracle(rewards, values, shifted, terminated, truncated, gamma, lam)


@graded("Границы эпизодов: terminated не бутстрапит, truncated бутстрапит V(s_{t+1}); рекурсия обрывается "
        "(и с целыми наградами)",
        subject="gae_with_boundaries")
def test_boundaries_hand_made(ppo):
    """γ = 0.9, λ = 0.8 (γλ = 0.72). Шаги 0–1 — эпизод, закончившийся на шаге 1 (terminated);
    шаги 2–3 — эпизод, оборванный лимитом на шаге 3 (truncated).
        δ_0 = 1 + 0.9·2 − 1 = 1.8            δ_1 = 0 + 0 − 2 = −2.0  (конечное состояние: V = 0)
        δ_2 = 1 + 0.9·1 − 0.5 = 1.4          δ_3 = 2 + 0.9·3 − 1 = 3.7  (обрыв: настоящая V(s_4) = 3)
        Â_3 = 3.7;  Â_2 = 1.4 + 0.72·3.7 = 4.064;  Â_1 = −2.0 (эпизод кончился);  Â_0 = 1.8 + 0.72·(−2) = 0.36
    """
    adv, ret = gae_pair(ppo.gae_with_boundaries(**BOUNDARY, gamma=0.9, lam=0.8), "gae_with_boundaries")
    b = BOUNDARY
    swapped = boundary_oracle(b["rewards"], b["values"], b["next_values"], b["truncated"], b["terminated"], 0.9, 0.8)
    no_cut_delta = np.array([1.8, -2.0, 1.4, 3.7])
    check_close(adv, [0.36, -2.0, 4.064, 3.7],
                what="gae_with_boundaries на батче из двух эпизодов "
                     "(расчёт — в docstring проверки в tests/s6-hw00-rl-foundations/test_ppo.py)",
                hint="δ_t = r_t + γ·V(s_{t+1})·(1 − terminated_t) − V(s_t);  Â_t = δ_t + γλ·(1 − done_t)·Â_{t+1}, "
                     "done = terminated или truncated.",
                mistakes={"terminated и truncated перепутаны": swapped,
                          "рекурсия не обрывается на конце эпизода": gae_explicit_sum(no_cut_delta, 0.9, 0.8),
                          "оборванный эпизод не бутстрапит V(s_{t+1})": [0.36, -2.0, 1.4 + 0.72 * 1.0, 1.0],
                          "конечное состояние бутстрапит V(s_{t+1})": [1.8 + 0.72 * 2.5, 2.5, 4.064, 3.7],
                          "флаги взяты со следующего шага (done_{t+1}, как dones в CleanRL)":
                              boundary_oracle(b["rewards"], b["values"], b["next_values"], [True, False, False, False],
                                              [False, False, True, False], 0.9, 0.8),
                          VALUES_SHIFTED: values_shifted(b["rewards"], b["values"], b["next_values"], b["terminated"],
                                                         b["truncated"], 0.9, 0.8)})
    check_close(ret, np.array([0.36, -2.0, 4.064, 3.7]) + b["values"],
                what="gae_with_boundaries: returns = advantages + values")
    ints = dict(BOUNDARY, rewards=np.array(b["rewards"], dtype=np.int64))  # [1, 0, 1, 2]: integer rewards are fine
    adv, _ = gae_pair(ppo.gae_with_boundaries(**ints, gamma=0.9, lam=0.8), "gae_with_boundaries")
    check_close(adv, [0.36, -2.0, 4.064, 3.7], what="gae_with_boundaries на том же батче, награды [1, 0, 1, 2] — "
                                                    "массив np.int64",
                hint="награды бывают целыми: приводите их к float — np.asarray(rewards, dtype=float); массив, "
                     "созданный как zeros_like от целых наград, тоже целый и округляет Â_t.",
                mistakes={"advantages — целый массив (zeros_like от целых наград): Â_t округлены до целых":
                          np.trunc([0.36, -2.0, 4.064, 3.7])})


@graded("Батч из нескольких эпизодов равен GAE по каждому эпизоду отдельно (seed {seed})",
        subject="gae_with_boundaries")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_boundaries_random(ppo, seed):
    rng = np.random.default_rng(300 + seed)
    T = 40
    rewards, values, next_values = rng.normal(size=T), rng.normal(size=T), rng.normal(size=T)
    ends = rng.random(T) < 0.15
    terminated = ends & (rng.random(T) < 0.5)
    truncated = ends & ~terminated
    gamma, lam = 0.97, float(rng.uniform(0.5, 1.0))
    expected = boundary_oracle(rewards, values, next_values, terminated, truncated, gamma, lam)
    inputs = [rewards, values, next_values, terminated, truncated]
    copies = [x.copy() for x in inputs]
    adv, ret = gae_pair(ppo.gae_with_boundaries(*copies, gamma=gamma, lam=lam), "gae_with_boundaries")
    never = np.zeros(T, dtype=bool)
    mistakes = {
        "рекурсия обрывается только на terminated, а через truncated идёт дальше":
            boundary_oracle(rewards, values, next_values, terminated, never, gamma, lam),
        "terminated и truncated перепутаны":
            boundary_oracle(rewards, values, next_values, truncated, terminated, gamma, lam),
        "конечное состояние (terminated) бутстрапит V(s_{t+1})":
            boundary_oracle(rewards, values, next_values, never, ends, gamma, lam),
        "оборванный эпизод (truncated) не бутстрапит V(s_{t+1}): его обрыв принят за конечное состояние":
            boundary_oracle(rewards, values, next_values, ends, truncated, gamma, lam),
        "рекурсия не обрывается на концах эпизодов":
            gae_explicit_sum(rewards + gamma * np.where(terminated, 0.0, next_values) - values, gamma, lam),
        "флаги взяты со следующего шага (done_{t+1}, как dones в CleanRL, где флаг стоит на первом шаге эпизода)":
            boundary_oracle(rewards, values, next_values, np.append(terminated[1:], False),
                            np.append(truncated[1:], False), gamma, lam),
        VALUES_SHIFTED: values_shifted(rewards, values, next_values, terminated, truncated, gamma, lam),
    }
    check_close(adv, expected, what=f"gae_with_boundaries, T = {T}, эпизодов {int(ends.sum()) + 1}, λ = {lam:.3f}",
                hint="δ_t = r_t + γ·V(s_{t+1})·(1 − terminated_t) − V(s_t);  Â_t = δ_t + γλ·(1 − done_t)·Â_{t+1}, "
                     "done = terminated или truncated.", mistakes=mistakes)
    check_close(ret, expected + values, what="gae_with_boundaries: returns")
    for name, before, after in zip(["rewards", "values", "next_values", "terminated", "truncated"], inputs, copies):
        check_unchanged(before, after, name=name, function="gae_with_boundaries")


@graded("Параллельные среды: форма [T, N] — каждый столбец считается отдельно", subject="gae_with_boundaries")
def test_boundaries_parallel(ppo):
    rng = np.random.default_rng(11)
    T, N = 25, 3
    rewards, values, next_values = rng.normal(size=(T, N)), rng.normal(size=(T, N)), rng.normal(size=(T, N))
    ends = rng.random((T, N)) < 0.2
    terminated = ends & (rng.random((T, N)) < 0.5)
    truncated = ends & ~terminated
    adv, ret = gae_pair(ppo.gae_with_boundaries(rewards, values, next_values, terminated, truncated, 0.99, 0.95),
                          "gae_with_boundaries для [T, N]")
    expected = np.stack([boundary_oracle(rewards[:, n], values[:, n], next_values[:, n], terminated[:, n],
                                         truncated[:, n], 0.99, 0.95) for n in range(N)], axis=1)
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
            flat = boundary_oracle(rewards.ravel(), values.ravel(), next_values.ravel(), terminated.ravel(),
                                   truncated.ravel(), 0.99, 0.95).reshape(T, N)
            mistakes = {"батч [T, N] развёрнут в одну последовательность (ravel/flatten): среды смешаны, а рекурсия "
                        "должна идти по оси времени 0 для каждого столбца отдельно": flat}
    check_close(adv, expected, what=f"gae_with_boundaries для батча формы ({T}, {N})", hint=hint, mistakes=mistakes)
    check_close(ret, expected + values, what="gae_with_boundaries для [T, N]: returns")
    adv01, _ = gae_pair(ppo.gae_with_boundaries(rewards, values, next_values, terminated.astype(np.int64),
                                                  truncated.astype(np.int64), 0.99, 0.95), "gae_with_boundaries")
    check_close(adv01, expected, what=f"gae_with_boundaries для [{T}, {N}] с флагами 0/1 (np.int64) вместо True/False",
                hint="флаги бывают и числами 0/1: приведите их к bool (np.asarray(x, dtype=bool)) или пишите 1 − flag; "
                     "`~` на целых числах даёт −1 и −2, а не «не конец».")


@graded("Без концов эпизодов gae_with_boundaries совпадает с gae (last_value — последний элемент next_values)",
        subject="gae_with_boundaries")
def test_boundaries_match_gae(ppo):
    rng = np.random.default_rng(5)
    values = rng.normal(size=10)
    rewards = rng.normal(size=10)
    next_values = np.append(values[1:], 0.7)
    flags = np.zeros(10, dtype=bool)
    adv, _ = gae_pair(ppo.gae_with_boundaries(rewards, values, next_values, flags, flags, 0.95, 0.9),
                        "gae_with_boundaries")
    check_close(adv, gae_explicit_sum(deltas_oracle(rewards, values, 0.7, 0.95), 0.95, 0.9),
                what="gae_with_boundaries на одном эпизоде, который продолжается после батча",
                hint="без концов эпизодов рекурсия идёт через весь батч, а последний шаг бутстрапит V(s_T) — последний "
                     "элемент next_values: это обычный GAE всего батча с last_value = V(s_T).")


# ---- bonus: the clipped value loss ---------------------------------------------------------


@graded("Бонус: клиппированный loss критика (labml): пример → 0.075", bonus=True, subject="clipped_value_loss")
def test_clipped_value_loss_pinned(ppo):
    """V_pred = [1, 2, 0.5], V_old = [0.8, 2.5, 0.5], R̂ = [1.2, 1.9, 0], ε = 0.2:
    V_clip = [1.0, 2.3, 0.5];  (V − R̂)² = [0.04, 0.01, 0.25];  (V_clip − R̂)² = [0.04, 0.16, 0.25];
    0.5 · mean(max) = 0.5 · mean([0.04, 0.16, 0.25]) = 0.075.
    """
    check_float(ppo.clipped_value_loss([1.0, 2.0, 0.5], [0.8, 2.5, 0.5], [1.2, 1.9, 0.0]), 0.075,
                what="clipped_value_loss (пример — в docstring проверки в tests/s6-hw00-rl-foundations/test_ppo.py)",
                hint="0.5·mean(max((V − R̂)², (V_old + clip(V − V_old, −ε, ε) − R̂)²)).",
                mistakes={"min вместо max": 0.5 * np.mean([0.04, 0.01, 0.25]), "без множителя 0.5": 0.15})


@graded("Бонус: клиппированный loss критика на случайном батче", bonus=True, subject="clipped_value_loss")
def test_clipped_value_loss_random(ppo):
    rng = np.random.default_rng(9)
    v_old = rng.normal(size=50)
    v = v_old + rng.normal(0, 0.4, size=50)
    ret = rng.normal(size=50)
    v_clip = np.where(v - v_old > 0.3, v_old + 0.3, np.where(v - v_old < -0.3, v_old - 0.3, v))
    expected = 0.5 * np.mean(np.maximum((v - ret) ** 2, (v_clip - ret) ** 2))
    check_float(ppo.clipped_value_loss(v, v_old, ret, eps=0.3), expected, what="clipped_value_loss, ε = 0.3",
                hint="ε передаётся аргументом eps; клиппируется разность V − V_old, а не само V.")
