"""Graded checks of the part `dp`: the Bellman equation, policy evaluation, value and policy iteration.

Pinned to the textbook's grid worlds (Sutton & Barto: the 5×5 world with A→A′ and B→B′, figures 3.2
and 3.5; the 4×4 world of example 4.1 with γ = 1; Russell & Norvig's 4×3 world) and to a two-state
chain worked out by hand. Randomized MDPs are checked against oracles written differently from the
reference: policy evaluation as a linear system over state–action pairs, V* as the best of all
deterministic policies (brute force), optimality as "no single-state change improves the policy".
The oracles and the replays of typical mistakes are the instructor's answer key (key/dp.py; the student's copy
compares with their answers recorded on its inputs, grader.grading.key); the randomized checks run on hidden seeds too
(grader.grading.hidden), and a hidden draw whose optimal actions are nearly tied is drawn again.

Same verdict on every machine: a check never depends on last-bit rounding. Random transition and policy
rows are multiples of 2⁻¹⁰, so they sum to exactly 1 in any order of summation (the rows that must be accepted
although they sum to 1 only up to rounding are float32 probabilities: their sums in float64 are exact in any order,
and never 1); the optimal policies of
the examples that policy iteration is run on have no near-ties (the best action beats the next by ≥ 0.01),
except the exact zeros of absorbing states; the tie rule is checked on an MDP where Q = R exactly and
the near-tie (10⁻¹⁰) lies far above rounding and far below the rule's tolerance (10⁻⁸), and at the rule's edge,
0.1% inside or outside its tolerance (10⁻¹¹·max(1, |max Q|) away, again far above rounding). The 5×5 grid's
optimal actions do tie exactly, and there a bare argmax may or may not switch forever depending on the
BLAS kernel, so policy iteration is run on it only after it has shown the tie rule
(tests/kit/test_verdicts_noise.py grades this with noise injected into the implementation's linear algebra).
"""
import numpy as np
import pytest

from grader.grading.checks import (
    about,
    as_array,
    attempt,
    check_close,
    check_pair,
    check_that,
    check_unchanged,
    fmt,
    graded,
    matches,
)
from grader.grading.hidden import inputs
from grader.grading.key import answer_key

key = answer_key("dp")  # the oracles (written differently from the reference) and the replays of typical mistakes


def dyadic_rows(x, bits=10):
    """Probability rows rounded to multiples of 2^-bits that sum to exactly 1, in any order of summation
    and in float32 too: a validation written as ``P.sum(axis=2) == 1`` gets the same answer everywhere."""
    scale = 2.0 ** bits
    q = np.floor(np.asarray(x, dtype=float) * scale).reshape(-1, np.shape(x)[-1])
    q[np.arange(len(q)), q.argmax(axis=1)] += scale - q.sum(axis=1)
    return q.reshape(np.shape(x)) / scale


def random_mdp(rng, S, A, terminal=False):
    """A random MDP; with ``terminal`` the last state is absorbing with zero reward."""
    P = dyadic_rows(rng.dirichlet(np.full(S, 0.5), size=(S, A)))
    R = rng.normal(size=(S, A))
    if terminal:
        P[-1] = 0.0
        P[-1, :, -1] = 1.0
        R[-1] = 0.0
    return P, R


def random_policy(rng, S, A):
    return dyadic_rows(rng.dirichlet(np.ones(A), size=S))


def uniform(S, A):
    return np.full((S, A), 1.0 / A)


def env_mdp(envs, name):
    return getattr(envs, name)().to_mdp()


def tie_free_mdp(rng, draw):
    """``draw(rng)`` → (P, R, γ, …), drawn again until the optimal actions are unambiguous (in every state but an
    absorbing one the best action beats the next by ≥ 0.01): the public seeds' first draws are; a hidden seed's
    draw may not be."""
    while True:
        drawn = draw(rng)
        if not key.near_tie(*drawn[:3]):
            return drawn


CONVERGE = ("ответ близок к верному, но не совпадает: похоже, итерации остановлены слишком рано — повторяйте, пока "
            "max_s |V_{k+1}(s) − V_k(s)| ≥ tol (tol = 1e-10 по умолчанию), а не фиксированное число раз.")


def converge(formula: str, got, expected) -> str:
    """The hint: the formula, and CONVERGE when the answer is near the expected one (within 1% of the largest
    value), as iterations stopped too early leave it; an answer further off has another cause."""
    try:
        got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
        with np.errstate(all="ignore"):  # an answer with inf or NaN is not near
            near = got.shape == expected.shape and bool(
                np.all(np.abs(got - expected) <= 1e-2 * max(1.0, float(np.max(np.abs(expected))))))
    except (TypeError, ValueError):
        near = False
    return f"{formula}; {CONVERGE}" if near else f"{formula}."


def check_values(V, S, A, what):
    """State values must be a vector [S]; return it as a float array."""
    arr = as_array(V, what)
    check_that(arr.shape == (S,), what=f"{what}: форма V", expected=f"[S] = ({S},)", got=fmt(arr),
               hint="похоже, вернули Q(s, a) формы [S, A], а нужна V(s) = max_a Q(s, a) — вектор [S]."
               if arr.shape == (S, A) else "V — вектор ценностей состояний формы [S].")
    return arr


def check_policy(policy, S, A, what):
    """A policy must be an [S, A] row-stochastic matrix; return it as a float array."""
    arr = as_array(policy, what)
    check_that(arr.shape == (S, A), what=f"{what}: форма политики", expected=f"[S, A] = ({S}, {A})",
               got=fmt(arr), hint="похоже, вернули номера действий (argmax); политика — матрица [S, A] вероятностей "
                                  "π(a|s), у детерминированной — one-hot строки: π(a|s) = 1 у выбранного действия "
                                  "и 0 у остальных."
               if arr.shape == (S,) else "политика — матрица [S, A] вероятностей π(a|s) (one-hot строки).")
    check_that(bool(np.all(arr >= -1e-12) and np.allclose(arr.sum(axis=1), 1.0, atol=1e-6)),
               what=f"{what}: строки политики — распределения", expected="π(a|s) ≥ 0, сумма по a равна 1",
               got=f"суммы строк {fmt(arr.sum(axis=1))}")
    return arr


def greedy_hint(policy, by_reward):
    """A hint for a policy that is not greedy by Q*: name the mistake when the policy is greedy by R alone
    (``by_reward``: the [S, A] mask of the actions best by R, key.reward_greedy)."""
    if np.all(by_reward[policy > 1e-9]):
        return ("похоже, политика выбрана по одной награде R: жадность — по Q = R + γ·Σ P[s, a, s']·V(s'), "
                "с учётом будущего.")
    return "политика — argmax_a Q*(s, a), Q*(s, a) = R[s, a] + γ·Σ P[s, a, s']·V*(s')."


def check_greedy(policy, Q_star, best, by_reward, what):
    """The policy puts mass only on actions that maximize Q* (``best``: their [S, A] mask, key.greedy_mask;
    ``by_reward``: for the hint, see greedy_hint)."""
    wrong = np.argwhere((policy > 1e-9) & ~best)
    check_that(len(wrong) == 0, what=f"{what}: политика жадная по Q*",
               expected="вероятность только у действий с max_a Q*(s, a)",
               got=(f"в состоянии {wrong[0][0]} выбрано действие {wrong[0][1]} с Q* = {Q_star[tuple(wrong[0])]:.4f} "
                    f"при max Q* = {Q_star[wrong[0][0]].max():.4f}") if len(wrong) else None,
               hint=greedy_hint(policy, by_reward))


# ---- policy evaluation: a two-state chain by hand, the textbook's grid worlds, random MDPs -------

# state 0: action 0 "stay" (reward 1, stay in 0), action 1 "go" (reward 5, to state 1); state 1 is terminal
CHAIN_P = [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]]
CHAIN_R = [[1.0, 5.0], [0.0, 0.0]]
FIG_3_2 = [[3.3, 8.8, 4.4, 5.3, 1.5], [1.5, 3.0, 2.3, 1.9, 0.5], [0.1, 0.7, 0.7, 0.4, -0.4],
           [-1.0, -0.4, -0.4, -0.6, -1.2], [-1.9, -1.3, -1.2, -1.4, -2.0]]
FIG_3_5 = [[22.0, 24.4, 22.0, 19.4, 17.5], [19.8, 22.0, 19.8, 17.8, 16.0], [17.8, 19.8, 17.8, 16.0, 14.4],
           [16.0, 17.8, 16.0, 14.4, 13.0], [14.4, 16.0, 14.4, 13.0, 11.7]]


@graded("Цепочка из двух состояний: ценность равновероятной политики, V(0) = 3 / 0.55 ≈ 5.4545 ({method})",
        subject="{method}")
@pytest.mark.parametrize("method", ["solve_bellman", "policy_evaluation"])
def test_chain_evaluation(dp, method):
    """Состояние 0: «остаться» (+1, снова 0) или «уйти» (+5, в конечное состояние 1). π = (1/2, 1/2), γ = 0.9:
        V(0) = ½·(1 + 0.9·V(0)) + ½·(5 + 0.9·0) = 3 + 0.45·V(0)  ⇒  V(0) = 3 / 0.55 = 5.4545…;  V(1) = 0.
    """
    P, R, pi = np.array(CHAIN_P), np.array(CHAIN_R), uniform(2, 2)
    got = getattr(dp, method)(CHAIN_P, CHAIN_R, pi.tolist(), 0.9)  # lists are fine too
    check_close(got, [3 / 0.55, 0.0], what=f"{method} для цепочки из двух состояний, π = (½, ½), γ = 0.9", atol=1e-6,
                hint="V(s) = Σ_a π(a|s)·(R[s, a] + γ·Σ_{s'} P[s, a, s']·V(s')); у конечного состояния V = 0.",
                mistakes={"взят max по действиям (это V*, а не V^π)": [10.0, 0.0],
                          "не усреднили по π, а сложили награды действий": [6 / 0.1, 0.0],
                          "остановились после первого прохода: изменение, по которому решают остановиться, вышло "
                          "нулевым (Δ взято по последнему состоянию, а не max по всем; или V_old = V — тот же "
                          "массив, а не копия)": [3.0, 0.0],
                          **{k: v for k, v in key.evaluation_mistakes(P, R, pi, 0.9).items()
                             if k.startswith(("P_π транспонирована", "γ умножает", "вместо среднего по π"))}})


@graded("Сетка 5×5 (A → A′ +10, B → B′ +5), случайная политика, γ = 0.9: V(A) = 8.8, V(B) = 5.3 ({method})",
        subject="{method}")
@pytest.mark.parametrize("method", ["solve_bellman", "policy_evaluation"])
def test_gridworld_5x5_random_policy(dp, envs, method):
    P, R = env_mdp(envs, "gridworld_5x5")
    pi = uniform(25, 4)
    copies = [P.copy(), R.copy(), pi.copy()]
    got = check_close(getattr(dp, method)(*copies, 0.9), np.ravel(FIG_3_2), atol=0.05 + 1e-9,
                      what=f"{method} на сетке 5×5 Саттона и Барто (таблица ценностей, округлённая до 0.1)",
                      hint="π(a|s) = 1/4; за попытку уйти за край −1 и агент остаётся на месте; из A любое действие "
                           "даёт +10 и переносит в A′.", mistakes=key.evaluation_mistakes(P, R, pi, 0.9))
    check_close(got, key.oracle_evaluate(P, R, pi, 0.9), what=f"{method} на сетке 5×5: точные ценности", atol=1e-6)
    for name, before, after in zip(["P", "R", "policy"], [P, R, pi], copies):
        check_unchanged(before, after, name=name, function=method)


@graded("Сетка 4×4 (пример 4.1), каждый ход −1, γ = 1: policy_evaluation даёт 0, −14, −20, −22",
        subject="policy_evaluation")
def test_gridworld_4x4_gamma_one(dp, envs):
    P, R = env_mdp(envs, "gridworld_4x4")
    expected = [0, -14, -20, -22, -14, -18, -20, -20, -20, -20, -18, -14, -22, -20, -14, 0]
    check_close(dp.policy_evaluation(P, R, uniform(16, 4), 1.0), expected, atol=1e-5,
                what="policy_evaluation на сетке 4×4 со случайной политикой, γ = 1",
                hint="при γ = 1 итерации сходятся, потому что конечные клетки поглощают с нулевой наградой; "
                     "остановка — когда max |V_{k+1} − V_k| < tol.",
                mistakes={"взят max по действиям (это V*, а не V^π)":
                          [0, -1, -2, -3, -1, -2, -3, -2, -2, -3, -2, -1, -3, -2, -1, 0]})


@graded("Сетка 4×4, γ = 1: solve_bellman даёт верные ценности или понятную ошибку ValueError", subject="solve_bellman",
        guard=True)
def test_solve_bellman_gamma_one(dp, envs):
    P, R = env_mdp(envs, "gridworld_4x4")
    expected = [0, -14, -20, -22, -14, -18, -20, -20, -20, -20, -18, -14, -22, -20, -14, 0]
    try:
        got = dp.solve_bellman(P, R, uniform(16, 4), 1.0)
    except ValueError:  # numpy's LinAlgError is a ValueError too
        return
    check_close(got, expected, atol=1e-5, what="solve_bellman на сетке 4×4, γ = 1",
                hint="при γ = 1 матрица I − P_π вырождена (строки конечных состояний нулевые): либо бросьте "
                     "ValueError с объяснением, либо решите систему только для неконечных состояний.")


EVALUATION_CASES = [("float64", 0), ("terminal", 1), ("float32", 2)]
EVALUATORS = ("solve_bellman", "policy_evaluation")


# one function a check: a failure on hidden inputs closes the gate of that function only (grader.grading.runner.gated)
@graded("Случайные MDP: {method} совпадает с независимым расчётом V^π (seed {seed})", subject="{method}", oracle=True)
@inputs("method,kind,seed", [(m, k, s) for m in EVALUATORS for k, s in EVALUATION_CASES],
        ids=[f"{m}-{s}" for m in EVALUATORS for _, s in EVALUATION_CASES], seed="seed")
def test_evaluation_random(dp, method, kind, seed):
    rng = np.random.default_rng(400 + seed)
    S, A = int(rng.integers(4, 9)), int(rng.integers(2, 5))
    P, R = random_mdp(rng, S, A, terminal=kind == "terminal")
    pi = random_policy(rng, S, A)
    gamma = float(rng.uniform(0.5, 0.95))
    f32 = kind == "float32"
    expected = key.oracle_evaluate(P, R, pi, gamma)
    dtype = np.float32 if f32 else np.float64  # float32 inputs are fine too
    atol = 1e-4 if f32 else 1e-7
    exp32 = key.oracle_evaluate(P.astype(np.float32), R.astype(np.float32), pi.astype(np.float32), gamma)
    mistakes = key.evaluation_mistakes(P, R, pi, gamma)
    args = [x.astype(dtype) for x in (P, R, pi)]
    copies = [x.copy() for x in args]
    got = getattr(dp, method)(*copies, gamma)
    formula = "V^π = r_π + γ·P_π·V^π, r_π[s] = Σ_a π(a|s)·R[s, a], P_π[s, s'] = Σ_a π(a|s)·P[s, a, s']"
    check_close(got, exp32 if f32 else expected, atol=atol, rtol=1e-4 if f32 else 1e-7,
                what=f"{method} на случайной MDP: S = {S}, A = {A}, γ = {gamma:.3f}"
                     + (", входы float32 (с точностью 1e-4)" if f32 else " (с точностью 1e-7)"),
                hint=converge(formula, got, expected) if method == "policy_evaluation" else formula + ".",
                mistakes=mistakes)
    for name, before, after in zip(["P", "R", "policy"], args, copies):
        check_unchanged(before, after, name=name, function=method)


# ---- Q from V ------------------------------------------------------------------------------------


@graded("Цепочка из двух состояний: Q(s, a) = R + γ·P·V, Q(0, ·) = [10, 5] при V = [10, 0]", subject="q_from_v")
def test_chain_q_from_v(dp):
    """При V = [10, 0] и γ = 0.9: Q(0, «остаться») = 1 + 0.9·10 = 10, Q(0, «уйти») = 5 + 0.9·0 = 5, Q(1, ·) = 0."""
    wrong_axis = key.q_mistakes(CHAIN_P, CHAIN_R, [10.0, 0.0], 0.9)["сумма по оси s, а не s'"]
    check_close(dp.q_from_v(CHAIN_P, CHAIN_R, [10.0, 0.0], 0.9), [[10.0, 5.0], [0.0, 0.0]],
                what="q_from_v для цепочки, V = [10, 0], γ = 0.9",
                hint="Q(s, a) = R[s, a] + γ·Σ_{s'} P[s, a, s']·V(s'): сумма — по следующему состоянию s', "
                     "последней оси P.",
                mistakes={"γ не учтён": [[11.0, 5.0], [0.0, 0.0]],
                          "γ умножает и награду: γ·(R + P·V), а нужно R + γ·P·V": [[9.9, 4.5], [0.0, 0.0]],
                          "сумма по оси s, а не s'": wrong_axis})


@graded("Случайные MDP: q_from_v совпадает с суммой R[s, a] + γ·Σ P[s, a, s']·V(s') (seed {seed})", subject="q_from_v",
        oracle=True)
@inputs("seed", [0, 1])
def test_q_from_v_random(dp, seed):
    rng = np.random.default_rng(500 + seed)
    S, A = 6, 3
    P, R = random_mdp(rng, S, A)
    V = rng.normal(size=S)
    gamma = float(rng.uniform(0.5, 1.0))
    args = [P.copy(), R.copy(), V.copy()]
    check_close(dp.q_from_v(*args, gamma), key.oracle_q(P, R, V, gamma),
                what=f"q_from_v, S = {S}, A = {A}, γ = {gamma:.3f}",
                hint="Q[s, a] = R[s, a] + γ·Σ_{s'} P[s, a, s']·V[s']: сумма — по следующему состоянию s', "
                     "последней оси P.",
                mistakes=key.q_mistakes(P, R, V, gamma))
    for name, before, after in zip(["P", "R", "V"], [P, R, V], args):
        check_unchanged(before, after, name=name, function="q_from_v")
    # integer rewards (a grid world's −1 per step, a list of ints) are fine too: Q is not an integer array
    R_int = np.round(3 * R).astype(np.int64)
    check_close(dp.q_from_v(P.copy(), R_int.copy(), V.copy(), gamma), key.oracle_q(P, R_int, V, gamma),
                what=f"q_from_v с целыми наградами R (np.int64), S = {S}, A = {A}, γ = {gamma:.3f}",
                hint="R из целых чисел — обычное дело (−1 за ход в мире-сетке): считайте в float, "
                     "np.asarray(R, dtype=float); массив Q, созданный по образцу целого R (zeros_like), был бы целым.",
                mistakes={"Q — целый массив (создан по образцу целого R, zeros_like, или R взят без dtype=float): "
                          "каждое Q(s, a) = R + γ·P·V округлено до целого": key.q_truncated(P, R_int, V, gamma)})


# ---- value and policy iteration ------------------------------------------------------------------


@graded("Цепочка из двух состояний: при γ = {gamma} оптимально «{best}», V*(0) = {v0} ({method})", subject="{method}")
@pytest.mark.parametrize("gamma,best,v0", [(0.9, "остаться", 10.0), (0.5, "уйти", 5.0)], ids=["gamma0.9", "gamma0.5"])
@pytest.mark.parametrize("method", ["value_iteration", "policy_iteration"])
def test_chain_optimal(dp, method, gamma, best, v0):
    """«Остаться» навсегда стоит 1 / (1 − γ): 10 при γ = 0.9 (лучше, чем уйти за 5) и 2 при γ = 0.5 (хуже)."""
    V, policy = check_pair(getattr(dp, method)(CHAIN_P, CHAIN_R, gamma), f"{method} возвращает (V, policy)",
                           names=("V", "policy"))
    V = check_values(V, 2, 2, f"{method} для цепочки")
    uniform_value = key.oracle_evaluate(CHAIN_P, CHAIN_R, uniform(2, 2), gamma)  # V of the equiprobable policy
    mistakes = ({"вернули ценность исходной случайной политики (policy iteration остановилась после первого "
                 "улучшения)": uniform_value} if method == "policy_iteration" else
                {"в value iteration взято среднее по действиям, а не max_a (это V равновероятной политики)":
                     uniform_value,
                 "value iteration остановилась после первого прохода (V = max_a R): изменение для остановки вышло "
                 "нулевым (V_old = V — тот же массив, а не копия; или Δ по последнему состоянию, а не max по всем)":
                     [5.0, 0.0]})
    check_close(V, [v0, 0.0], what=f"{method} для цепочки, γ = {gamma}: V* (с точностью 1e-6)", atol=1e-6,
                hint=converge("V*(s) = max_a (R[s, a] + γ·Σ P[s, a, s']·V*(s'))", V, [v0, 0.0]), mistakes=mistakes)
    policy = check_policy(policy, 2, 2, f"{method} для цепочки")
    action = 0 if best == "остаться" else 1
    check_close(policy[0], np.eye(2)[action], what=f"{method}, γ = {gamma}: политика в состоянии 0",
                hint="Q*(0, «остаться») = 1 + γ·V*(0), Q*(0, «уйти») = 5: выбирайте большее.",
                mistakes={"политика выбрана по одной награде R, без γ·P·V": np.eye(2)[1]} if action == 0 else
                {"политика выбрана по ценности следующего состояния P·V, без награды R": np.eye(2)[0]})


# The tie rule, on an MDP where Q = R exactly: from states 0 and 1 every action ends the episode in the
# absorbing state 2, so Q(s, a) = R[s, a] + γ·0 on any machine and in any order of summation. The near-ties
# are 10⁻¹⁰ apart: far above rounding (10⁻¹⁶) and far below the rule's tolerance 1e-8·max(1, |max Q|).
TIE_P = [[[0.0, 0.0, 1.0]] * 3] * 3
TIE_R = [[1.0, 1.0 + 1e-10, 0.5], [0.0, 2.0, 2.0 + 1e-10], [0.0, 0.0, 0.0]]
TIE_RULE = [0, 1, 0]  # the lowest action among those within the tolerance of the max
TIE_BARE_ARGMAX = [1, 2, 0]
TIE_HINT = ("правило равенства: в каждом состоянии s равными максимуму считаются все действия с "
            "Q(s, a) ≥ max_b Q(s, b) − 1e-8·max(1, |max_b Q(s, b)|), и из них берётся действие с наименьшим номером, "
            "а не то, чьё Q больше всех: у равноценных действий Q различаются лишь ошибкой округления.")


# The rule at its edge, on the same kind of MDP (Q = R exactly): each near-tie lies 0.1% inside or outside the
# tolerance 1e-8·max(1, |max Q|) — 10⁻¹¹·max(1, |max Q|) away from it, far above rounding (10⁻¹⁶·|max Q|).
TIE_EDGE_P = [[[0.0, 0.0, 0.0, 0.0, 1.0]] * 2] * 5
TIE_EDGE_R = [[1.0, 1.0 + 1.001e-8],  # 1.001·10⁻⁸ > 1e-8·1: не равенство → действие 1
              [1000.0, 1000.0 + 0.999e-5],  # 0.999·10⁻⁵ < 1e-8·1000: равенство → 0
              [0.5, 0.5 + 0.999e-8],  # 0.999·10⁻⁸ < 1e-8·max(1, 0.5) = 1e-8: равенство → 0
              [-1000.0, -1000.0 + 0.999e-5],  # 0.999·10⁻⁵ < 1e-8·|−1000|: равенство → 0
              [0.0, 0.0]]  # конечное состояние
TIE_EDGE_RULE = [1, 0, 0, 0, 0]
TIE_EDGE_V = [1.0, 1000.0, 0.5, -1000.0, 0.0]  # V* = max_a R (Q = R), up to the gaps 10⁻⁵ and less
TIE_EDGE_TEXT = ["[1, 1 + 1.001·10⁻⁸]", "[1000, 1000 + 0.999·10⁻⁵]", "[0.5, 0.5 + 0.999·10⁻⁸]",
                 "[−1000, −1000 + 0.999·10⁻⁵]", "[0, 0] (конечное)"]
TIE_EDGE_HINT = ("допуск правила — 1e-8·max(1, |max_a Q(s, a)|): при |max Q| ≤ 1 это 1e-8, при |max Q| = 1000 — 1e-5; "
                 "действие, лучшее больше чем на допуск, не равно максимуму, а в пределах допуска берётся меньший "
                 "номер.")
TIE_EDGE_MISTAKES = {
    "равенство по np.isclose с max Q: его допуск (rtol = 1e-5) шире правила, и действие, лучшее на "
    "1.001·10⁻⁸, тоже сочтено равным": [0, 0, 0, 0, 0],
    "допуск 1e-8 без множителя max(1, |max Q|): при Q ≈ ±1000 разница 0.999·10⁻⁵ по правилу — равенство":
        [1, 1, 0, 1, 0],
    "допуск только относительный, 1e-8·|max Q| без max(1, ·): при |max Q| = 0.5 он меньше 1e-8": [1, 0, 1, 0, 0],
    "допуск 1e-8·max(1, max Q) без модуля: при отрицательном max Q = −1000 он сжимается до 1e-8": [1, 0, 0, 1, 0],
}


def bare_argmax_mistake(method):
    if method == "policy_iteration":
        return ("голый np.argmax (или допуск меньше 10⁻¹⁰): выбрано действие, которое лучше лишь на 10⁻¹⁰. У "
                "равноценных действий Q различаются ошибкой округления, выбор между ними может меняться от итерации "
                "к итерации, и цикл policy iteration «пока политика меняется» не кончается")
    return "голый np.argmax без допуска: выбрано действие, которое лучше лишь на 10⁻¹⁰, а по правилу это равенство"


@graded("Правило равенства: Q(0, ·) = [1, 1 + 10⁻¹⁰, 0.5], Q(1, ·) = [0, 2, 2 + 10⁻¹⁰] → действия 0 и 1; "
        "на границе допуска 1e-8·max(1, |max Q|) (±0.1%) — тоже по правилу ({method})", subject="{method}")
@pytest.mark.parametrize("method", ["value_iteration", "policy_iteration"])
def test_tie_rule(dp, method):
    """Из состояний 0 и 1 любое действие кончает эпизод (состояние 2 конечное), поэтому Q(s, a) = R[s, a].
    Q, отличающиеся от максимума не больше чем на 1e-8·max(1, |max Q|), равны, и из них берётся меньший
    номер: в состоянии 0 — действие 0 (хотя действие 1 лучше на 10⁻¹⁰), в состоянии 1 — действие 1,
    в конечном состоянии 2 (все Q = 0) — действие 0."""
    V, policy = check_pair(getattr(dp, method)(TIE_P, TIE_R, 0.9), f"{method} возвращает (V, policy)",
                           names=("V", "policy"))
    V = check_values(V, 3, 3, method)
    check_close(V, [1.0, 2.0, 0.0], atol=1e-6,
                what=f"{method}: V* (с точностью 1e-6; действия кончают эпизод, V = max_a R)",
                hint="V*(s) = max_a (R[s, a] + γ·Σ P[s, a, s']·V*(s')); у конечного состояния V = 0.")
    policy = check_policy(policy, 3, 3, method)
    check_close(policy, np.eye(3)[TIE_RULE], atol=1e-9, what=f"{method}: политика при почти равных Q (разница 10⁻¹⁰)",
                hint=TIE_HINT, mistakes={bare_argmax_mistake(method): np.eye(3)[TIE_BARE_ARGMAX]})
    # the rule at its edge: gaps 0.1% inside or outside the tolerance, at |max Q| = 1, 1000, 0.5 and −1000
    V, policy = check_pair(getattr(dp, method)(TIE_EDGE_P, TIE_EDGE_R, 0.9), f"{method} возвращает (V, policy)",
                           names=("V", "policy"))
    V = check_values(V, 5, 2, method)
    check_close(V, TIE_EDGE_V, atol=1e-4, rtol=0,
                what=f"{method}: V* на MDP, где Q = R (с точностью 1e-4: равные по правилу Q различаются меньше)",
                hint="V*(s) = max_a (R[s, a] + γ·Σ P[s, a, s']·V*(s')); у конечного состояния V = 0.")
    policy = check_policy(policy, 5, 2, method)
    mistakes = {name: np.eye(2)[actions] for name, actions in TIE_EDGE_MISTAKES.items()} | {
        bare_argmax_mistake(method): np.eye(2)[[1, 1, 1, 1, 0]]}
    if not matches(policy, np.eye(2)[TIE_EDGE_RULE], 1e-9) and not matches(
            attempt(None, dp.q_from_v, TIE_EDGE_P, TIE_EDGE_R, TIE_EDGE_V, 0.9), TIE_EDGE_R):
        # a wrong q_from_v (here Q = R: every action ends) shifts max Q and the tolerance with it: its policy can be
        # the one a wrong tie rule gives, so no tie mistake is named
        mistakes = None
    check_close(policy, np.eye(2)[TIE_EDGE_RULE], atol=1e-9,
                what=f"{method}: политика на границе допуска; Q(s, ·) = " + "; ".join(TIE_EDGE_TEXT),
                hint=TIE_EDGE_HINT, mistakes=mistakes)


def ignores_tie_rule(policy):
    """Whether a policy for the tie MDP puts its mass on an action that beats an equal one only by 10⁻¹⁰."""
    try:
        arr = np.asarray(policy, dtype=float)
    except (TypeError, ValueError):
        return False
    return arr.shape == (3, 3) and bool(arr[0, 1] > 0.5 or arr[1, 2] > 0.5)


@graded("Сетка 5×5, γ = 0.9: V*(A) = 24.4, V*(B) = 19.4 и оптимальная политика ({method})", subject="{method}")
@pytest.mark.parametrize("method", ["value_iteration", "policy_iteration"])
def test_gridworld_5x5_optimal(dp, envs, method):
    P, R = env_mdp(envs, "gridworld_5x5")
    V_star, Q_star, by_reward = key.oracle_v_star_large(P, R, 0.9), key.q_star_large(P, R, 0.9), key.reward_greedy(R)
    best = key.greedy_mask(Q_star)
    if method == "policy_iteration":
        # The grid's optimal actions tie exactly; without the tie rule the loop may switch between them forever
        # on one machine and stop on another. So it runs here only once the rule has been shown.
        _, probe = check_pair(dp.policy_iteration(TIE_P, TIE_R, 0.9), "policy_iteration возвращает (V, policy)",
                              names=("V", "policy"))
        check_that(not ignores_tie_rule(probe),
                   what="policy_iteration на сетке 5×5 не запускали: правило равенства не соблюдено",
                   expected="при почти равных Q (разница 10⁻¹⁰) — меньший номер действия (см. проверку «Правило "
                            "равенства»)",
                   got=f"на той MDP выбрана политика {fmt(np.asarray(probe, dtype=float))}",
                   hint="у клеток сетки 5×5 по два-три равноценных действия (их Q различаются лишь ошибкой "
                        "округления); голый np.argmax выбирает между ними по последнему биту, и цикл «пока политика "
                        "меняется» на одной машине кончается, а на другой — нет. " + TIE_HINT)
    V, policy = check_pair(getattr(dp, method)(P, R, 0.9), f"{method} возвращает (V, policy)", names=("V", "policy"))
    V = check_values(V, 25, 4, f"{method} на сетке 5×5")
    V = check_close(V, np.ravel(FIG_3_5), atol=0.05 + 1e-9, what=f"{method} на сетке 5×5: V*, округлённая до 0.1",
                    hint="V_{k+1}(s) = max_a (R[s, a] + γ·Σ P[s, a, s']·V_k(s')).")
    policy = check_policy(policy, 25, 4, f"{method} на сетке 5×5")
    check_close(V, V_star, atol=1e-6, what=f"{method} на сетке 5×5: точная V* (с точностью 1e-6)", hint=CONVERGE)
    # greedy by Q* is optimal: the grid's actions tie exactly or differ by ≥ 0.29, so any policy passing this check
    # has the value V* (the value of the student's own policy is not computed here: the key answers from inputs only)
    check_greedy(policy, Q_star, best, by_reward, f"{method} на сетке 5×5")


@graded("Мир 4×3 Рассела и Норвига (скольжение 0.8/0.1/0.1, ход −0.04, γ = 1): V* = 0.812 … 0.388 ({method})",
        subject="{method}")
@pytest.mark.parametrize("method", ["value_iteration", "policy_iteration"])
def test_gridworld_4x3(dp, envs, method):
    P, R = env_mdp(envs, "gridworld_4x3")
    # states in row order, the wall left out: top row, middle row (without the wall), bottom row
    expected = [0.812, 0.868, 0.918, 0.0, 0.762, 0.660, 0.0, 0.705, 0.655, 0.611, 0.388]
    try:
        got = getattr(dp, method)(P, R, 1.0)
    except ValueError as error:  # numpy's LinAlgError is a ValueError too
        check_that(False, what=f"{method} на мире 4×3 при γ = 1 (вход корректный)", expected="(V, policy)",
                   got=f"ValueError: {str(error)[:200]}",
                   hint="при γ = 1 система (I − P_π)V = r_π вырождена (строки конечных состояний нулевые): в policy "
                        "iteration оценивайте политику через policy_evaluation, а solve_bellman — только при γ < 1."
                   if method == "policy_iteration" else "value iteration при γ = 1 сходится: конечные клетки "
                   "поглощают с нулевой наградой; линейную систему она не решает.")
    V, policy = check_pair(got, f"{method} возвращает (V, policy)", names=("V", "policy"))
    V = check_values(V, 11, 4, f"{method} на мире 4×3")
    check_close(V, expected, atol=0.0005 + 1e-9,
                what=f"{method} на мире 4×3 при γ = 1 (ценности учебника, округлённые до 0.001: допуск 0.0005)",
                hint="R[s, a] — уже ожидаемая награда с учётом скольжения; "
                     "конечные клетки поглощают с нулевой наградой.")
    policy = check_policy(policy, 11, 4, f"{method} на мире 4×3")
    # the textbook's policy: up the left column, right along the top, the bottom row heads left (the long way round)
    arrows = {0: 1, 1: 1, 2: 1, 4: 0, 5: 0, 7: 0, 8: 3, 9: 3, 10: 3}
    for s, a in arrows.items():
        check_that(policy[s, a] > 0.5, what=f"{method} на мире 4×3: действие в состоянии {s}",
                   expected=f"действие {a} ({'↑→↓←'[a]})", got=f"π(·|{s}) = {fmt(policy[s])}",
                   hint="в клетке рядом с ловушкой −1 оптимально идти в обход, чтобы не соскользнуть в неё.")


GRID_4X4_V_STAR = [0, -1, -2, -3, -1, -2, -3, -2, -2, -3, -2, -1, -3, -2, -1, 0]  # −(шагов до ближайшего угла)
GRID_4X4_MAX_R = [0] + [-1] * 14 + [0]  # V_1 = max_a R: −1 за ход, 0 в конечных углах
ONE_SWEEP = ("value iteration остановилась после первого прохода (V = max_a R): изменение, по которому решают "
             "остановиться, сразу вышло < tol — взято со знаком (max(V_new − V) или Σ(V_new − V) без модуля: при "
             "отрицательных наградах V только убывает), или V_old = V — тот же массив, а не копия; нужно "
             "max_s |V_new(s) − V(s)|")


@graded("Сетка 4×4 (пример 4.1), каждый ход −1, γ = 1: value_iteration даёт V* = −(шагов до ближайшего угла)",
        subject="value_iteration")
def test_gridworld_4x4_value_iteration(dp, envs):
    """Все награды отрицательны, поэтому V_k только убывает: V_1 = −1, V_2 = −2, … вдали от углов. Правило остановки
    смотрит на max_s |V_{k+1}(s) − V_k(s)|: без модуля изменение отрицательно уже после первого прохода."""
    P, R = env_mdp(envs, "gridworld_4x4")
    Q_star, by_reward = key.oracle_q(P, R, GRID_4X4_V_STAR, 1.0), key.reward_greedy(R)
    best = key.greedy_mask(Q_star)
    copies = [P.copy(), R.copy()]
    V, policy = check_pair(dp.value_iteration(*copies, 1.0), "value_iteration возвращает (V, policy)",
                           names=("V", "policy"))
    V = check_values(V, 16, 4, "value_iteration на сетке 4×4")
    check_close(V, GRID_4X4_V_STAR, atol=1e-6, what="value_iteration на сетке 4×4, γ = 1: V* (с точностью 1e-6)",
                hint="повторяйте проходы V_{k+1}(s) = max_a (R[s, a] + γ·Σ P[s, a, s']·V_k(s')), пока "
                     "max_s |V_{k+1}(s) − V_k(s)| ≥ tol — с модулем: здесь все награды −1, и V только убывает.",
                mistakes={ONE_SWEEP: GRID_4X4_MAX_R})
    policy = check_policy(policy, 16, 4, "value_iteration на сетке 4×4")
    check_greedy(policy, Q_star, best, by_reward, "value_iteration на сетке 4×4")
    for name, before, after in zip(["P", "R"], [P, R], copies):
        check_unchanged(before, after, name=name, function="value_iteration")


OPTIMAL_CASES = [("open", 0), ("open", 1), ("terminal", 2)]
SOLVERS = ("value_iteration", "policy_iteration")


@graded("Случайные MDP: {method} находит V* полного перебора политик (seed {seed})", subject="{method}", oracle=True)
@inputs("method,kind,seed", [(m, k, s) for m in SOLVERS for k, s in OPTIMAL_CASES],
        ids=[f"{m}-{s}" for m in SOLVERS for _, s in OPTIMAL_CASES], seed="seed")
def test_optimal_random(dp, method, kind, seed):
    def draw(rng):
        S, A = int(rng.integers(4, 7)), int(rng.integers(2, 4))
        P, R = random_mdp(rng, S, A, terminal=kind == "terminal")
        return P, R, float(rng.uniform(0.8, 0.95))

    P, R, gamma = tie_free_mdp(np.random.default_rng(600 + seed), draw)
    S, A = R.shape
    V_star, Q_star, by_reward = key.oracle_v_star(P, R, gamma), key.q_star(P, R, gamma), key.reward_greedy(R)
    best = key.greedy_mask(Q_star)
    copies = [P.copy(), R.copy()]
    V, policy = check_pair(getattr(dp, method)(*copies, gamma), f"{method} возвращает (V, policy)",
                           names=("V", "policy"))
    V = check_values(V, S, A, method)
    check_close(V, V_star, atol=1e-6,
                what=f"{method}: V* случайной MDP (S = {S}, A = {A}, γ = {gamma:.3f}), с точностью 1e-6",
                hint=converge("V* — лучшая из ценностей всех детерминированных политик (тест перебрал их все)", V,
                              V_star))
    policy = check_policy(policy, S, A, method)
    check_greedy(policy, Q_star, best, by_reward, method)
    for name, before, after in zip(["P", "R"], [P, R], copies):
        check_unchanged(before, after, name=name, function=method)


@graded("Жадная политика оптимальна: замена действия в любом одном состоянии её не улучшает ({method})",
        subject="{method}")
@inputs("method,seed", [("value_iteration", 700), ("policy_iteration", 700)],
        ids=["value_iteration", "policy_iteration"], seed="seed")
def test_no_single_state_change_improves(dp, method, seed):
    """У этой MDP оптимальная политика единственна (вне конечного состояния лучшее действие лучше следующего хотя бы
    на 0.01): в ней замена действия в любом одном состоянии ценность не поднимает, а замена на неоптимальное —
    снижает. Политика из value/policy iteration должна быть ею."""
    S, A = 7, 3
    P, R, gamma = tie_free_mdp(np.random.default_rng(seed), lambda rng: (*random_mdp(rng, S, A, terminal=True), 0.9))
    losses, by_reward = key.single_state_losses(P, R, gamma), key.reward_greedy(R)
    _, policy = check_pair(getattr(dp, method)(P, R, gamma), f"{method} возвращает (V, policy)", names=("V", "policy"))
    policy = check_policy(policy, S, A, method)
    for s in range(S):
        for a in range(A):
            check_that(not (policy[s, a] > 1e-9 and losses[s, a] >= 1e-8),
                       what=f"{method}: действие {a} в состоянии {s}",
                       expected="только действия, после которых лучшая политика ничего не теряет: любая другая "
                                "замена в одном состоянии уменьшает ценность",
                       got=f"π({a}|{s}) = {policy[s, a]:.4g}, а оптимальная политика с этим действием в состоянии {s} "
                           f"теряет до {losses[s, a]:.4g} ценности; значит, замена действия в этом или другом "
                           "состоянии улучшила бы вашу политику",
                       hint=greedy_hint(policy, by_reward))


# ---- bad input -------------------------------------------------------------------------------


def expect_value_error(call, what, hint):
    try:
        call()
    except ValueError:
        return
    check_that(False, what=what, expected="ValueError с понятным сообщением", got="функция отработала без ошибки",
               hint=hint)


def _bad_inputs():
    rng = np.random.default_rng(800)
    P, R = random_mdp(rng, 4, 2)
    pi = random_policy(rng, 4, 2)
    V = rng.normal(size=4)
    P_bad = P.copy()
    P_bad[1, 0] *= 0.9
    return P, R, pi, V, P_bad


# Rows that sum to 1 only up to rounding, and the same in every order of summation: float32 probabilities, whose sums
# in float64 are exact (1 + 3.7·10⁻⁸, 1 − 7.5·10⁻⁹, …) and never exactly 1; state 2 is absorbing.
ROUNDED_P = [[[0.6, 0.3, 0.1], [0.2, 0.7, 0.1]], [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]], [[0.0, 0.0, 1.0]] * 2]
ROUNDED_R = [[1.0, 0.5], [-0.5, 2.0], [0.0, 0.0]]
ROUNDED_PI = [[0.6, 0.4], [0.9, 0.1], [0.2, 0.8]]


def _five_calls(dp, P, R, pi, V):
    """Each of the part's five functions called on (P, R), γ = 0.9, as a thunk by name."""
    return {"solve_bellman": lambda: dp.solve_bellman(P, R, pi, 0.9),
            "policy_evaluation": lambda: dp.policy_evaluation(P, R, pi, 0.9),
            "q_from_v": lambda: dp.q_from_v(P, R, V, 0.9),
            "value_iteration": lambda: dp.value_iteration(P, R, 0.9),
            "policy_iteration": lambda: dp.policy_iteration(P, R, 0.9)}


@graded("Плохой вход: строки P или policy — не распределения (сумма ≠ 1 или вероятность < 0) → ValueError; "
        "сумма 1 с точностью округления (float32 [0.6, 0.3, 0.1]) — не ошибка",
        subject=("solve_bellman", "policy_evaluation", "q_from_v", "value_iteration", "policy_iteration"),
        guard=True)
def test_bad_rows(dp):
    P, R, pi, V, P_bad = _bad_inputs()
    for name, call in _five_calls(dp, P_bad, R, pi, V).items():
        with about(name):
            expect_value_error(call, f"{name}: строка P[1, 0, :] в сумме 0.9",
                               "проверьте в начале функции, что P ≥ 0 и Σ_{s'} P[s, a, s'] ≈ 1 (с допуском) для "
                               "каждой пары (s, a), иначе бросьте ValueError.")
    pi_bad = pi.copy()
    pi_bad[2] = [0.7, 0.7]
    for name in ["solve_bellman", "policy_evaluation"]:
        with about(name):
            expect_value_error(lambda name=name: getattr(dp, name)(P, R, pi_bad, 0.9),
                               f"{name}: строка политики в сумме 1.4",
                               "строки policy — распределения π(·|s): проверьте, что Σ_a π(a|s) ≈ 1 в каждом s.")
    # rows that do sum to 1 but hold a negative "probability"
    P_neg = P.copy()
    P_neg[1, 0] = [1.2, -0.2, 0.0, 0.0]
    pi_neg = pi.copy()
    pi_neg[2] = [1.5, -0.5]
    for name, call in _five_calls(dp, P_neg, R, pi, V).items():
        with about(name):
            expect_value_error(call, f"{name}: строка P[1, 0, :] = [1.2, −0.2, 0, 0] (сумма 1, но вероятность < 0)",
                               "сумма строки — не всё: вероятности ещё и неотрицательны. Проверьте, что все "
                               "P[s, a, s'] ≥ 0.")
    for name in ["solve_bellman", "policy_evaluation"]:
        with about(name):
            expect_value_error(lambda name=name: getattr(dp, name)(P, R, pi_neg, 0.9),
                               f"{name}: строка политики [1.5, −0.5] (сумма 1, но вероятность < 0)",
                               "π(a|s) ≥ 0: проверьте, что все вероятности политики неотрицательны, а не только "
                               "сумму строк.")
    # good input whose rows sum to 1 only up to rounding must not be rejected
    P, R, pi = (np.array(x, dtype=np.float32) for x in (ROUNDED_P, ROUNDED_R, ROUNDED_PI))
    for name, call in _five_calls(dp, P, R, pi, np.array([1.0, -2.0, 0.0])).items():
        with about(name):
            try:
                call()
            except ValueError as error:
                check_that(False, what=f"{name}: строки P и policy — вероятности float32, например [0.6, 0.3, 0.1]; "
                                       "их суммы — 1 с точностью округления (в float64 — 1 ± 4·10⁻⁸)",
                           expected="ответ: вход корректный", got=f"ValueError: {str(error)[:200]}",
                           hint="сравнивайте суммы строк с 1 с допуском — |Σ_{s'} P[s, a, s'] − 1| ≤ 10⁻⁶, а не на "
                                "точное равенство и не с допуском машинной точности float64 (2·10⁻¹⁶): вероятности "
                                "float32 складываются в 1 лишь с точностью ~10⁻⁷.")


@graded("Плохой вход: несогласованные формы P, R, policy, V → ValueError",
        subject=("solve_bellman", "policy_evaluation", "q_from_v", "value_iteration", "policy_iteration"),
        guard=True)
def test_bad_shapes(dp):
    P, R, pi, V, _ = _bad_inputs()
    R_wide = np.zeros((4, 3))
    pi_wide = np.full((4, 3), 1 / 3)
    calls = {"solve_bellman с R формы (4, 3) при P формы (4, 2, 4)": lambda: dp.solve_bellman(P, R_wide, pi_wide, 0.9),
             "solve_bellman с policy формы (4, 3)": lambda: dp.solve_bellman(P, R, pi_wide, 0.9),
             "policy_evaluation с policy формы (4, 3)": lambda: dp.policy_evaluation(P, R, pi_wide, 0.9),
             "q_from_v с V длины 5": lambda: dp.q_from_v(P, R, np.zeros(5), 0.9),
             "value_iteration с R формы (4, 3)": lambda: dp.value_iteration(P, R_wide, 0.9),
             "policy_iteration с R формы (3, 2)": lambda: dp.policy_iteration(P, R[:3], 0.9)}
    for what, call in calls.items():
        with about(what.split()[0]):
            expect_value_error(call, what, "сверьте формы: P — [S, A, S], R и policy — [S, A], V — [S]; "
                                           "при несовпадении raise ValueError(...) с описанием форм.")


# ---- edges: rows wrong though the total is right, shapes that broadcast, V ≡ 0, policy iteration at γ = 1 ----------
# (last in the file: a loop that never stops costs its check's time limit only after the other checks have run)


def _move_mass(rows, rng):
    """A copy of ``rows`` [..., n] where half the largest entry of one row moves to another row: every entry stays
    ≥ 0 and the total stays exactly the same (multiples of 2⁻¹¹), but two rows no longer sum to 1."""
    flat = np.array(rows, dtype=float).reshape(-1, np.shape(rows)[-1])
    src, dst = rng.choice(len(flat), size=2, replace=False)
    delta = flat[src].max() / 2
    flat[src, flat[src].argmax()] -= delta
    flat[dst, flat[dst].argmax()] += delta
    return flat.reshape(np.shape(rows)), (int(src), float(1 - delta)), (int(dst), float(1 + delta))


@graded("Плохой вход: две строки P (или policy) — не распределения, хотя сумма всех элементов верна (S·A или S) "
        "→ ValueError (seed {seed})",
        subject=("solve_bellman", "policy_evaluation", "q_from_v", "value_iteration", "policy_iteration"),
        guard=True)
@inputs("seed", [0])
def test_bad_rows_right_total(dp, seed):
    rng = np.random.default_rng(810 + seed)
    S, A = int(rng.integers(3, 7)), int(rng.integers(2, 5))
    P, R = random_mdp(rng, S, A)
    pi, V = random_policy(rng, S, A), rng.normal(size=S)
    P_bad, (src, low), (dst, high) = _move_mass(P, rng)
    hint = ("сумма всех P[s, a, s'] равна S·A и тогда, когда одна строка больше 1, а другая меньше: проверять нужно "
            "каждую строку P[s, a, ·] отдельно, а не сумму всего массива.")
    rows = f"строки P[{divmod(src, A)}] и P[{divmod(dst, A)}] в сумме {low:g} и {high:g} (S = {S}, A = {A})"
    for name, call in _five_calls(dp, P_bad, R, pi, V).items():
        with about(name):
            expect_value_error(call, f"{name}: {rows}; сумма всех элементов P — ровно S·A = {S * A}", hint)
    pi_bad, (src, low), (dst, high) = _move_mass(pi, rng)
    for name in ["solve_bellman", "policy_evaluation"]:
        with about(name):
            expect_value_error(lambda name=name: getattr(dp, name)(P, R, pi_bad, 0.9),
                               f"{name}: строки policy[{src}] и policy[{dst}] в сумме {low:g} и {high:g}; сумма всех "
                               f"элементов policy — ровно S = {S}",
                               "Σ_a π(a|s) = 1 должно выполняться в каждом состоянии s по отдельности, а не в сумме "
                               "по всем состояниям.")


@graded("Плохой вход: формы, которые NumPy молча транслирует (broadcast) — R [S, 1], policy [S, 1] и [1, A], "
        "V [S, 1] → ValueError (seed {seed})",
        subject=("solve_bellman", "policy_evaluation", "q_from_v", "value_iteration", "policy_iteration"),
        guard=True)
@inputs("seed", [0])
def test_bad_broadcast_shapes(dp, seed):
    rng = np.random.default_rng(820 + seed)
    S, A = int(rng.integers(3, 7)), int(rng.integers(2, 5))
    P, R = random_mdp(rng, S, A)
    pi, V = random_policy(rng, S, A), rng.normal(size=S)
    R_col = R[:, :1].copy()  # [S, 1]: one reward per state, broadcast over the actions
    pi_col = np.ones((S, 1))  # [S, 1]: rows of one "probability" 1 each, broadcast over the actions
    pi_row = pi[:1].copy()  # [1, A]: one state's distribution, broadcast over the states
    hint = ("форма проверяется целиком: R и policy — [S, A], V — [S]. Если сверять только число строк или число "
            "элементов, пройдёт и форма [S, 1] или [1, A], которую NumPy молча растягивает (broadcast) на [S, A]: "
            "ответ посчитан, но не для той задачи.")
    calls = {f"solve_bellman с R формы ({S}, 1) при P формы {P.shape}": lambda: dp.solve_bellman(P, R_col, pi, 0.9),
             f"policy_evaluation с R формы ({S}, 1)": lambda: dp.policy_evaluation(P, R_col, pi, 0.9),
             f"q_from_v с R формы ({S}, 1)": lambda: dp.q_from_v(P, R_col, V, 0.9),
             f"value_iteration с R формы ({S}, 1)": lambda: dp.value_iteration(P, R_col, 0.9),
             f"policy_iteration с R формы ({S}, 1)": lambda: dp.policy_iteration(P, R_col, 0.9),
             f"solve_bellman с policy формы ({S}, 1) из единиц": lambda: dp.solve_bellman(P, R, pi_col, 0.9),
             f"policy_evaluation с policy формы (1, {A})": lambda: dp.policy_evaluation(P, R, pi_row, 0.9),
             f"q_from_v с V формы ({S}, 1)": lambda: dp.q_from_v(P, R, V[:, None].copy(), 0.9)}
    for what, call in calls.items():
        with about(what.split()[0]):
            expect_value_error(call, what, hint)


ZERO_R_METHODS = ("policy_evaluation", "value_iteration")


@graded("Нулевые награды, V ≡ 0 (бывает и одно состояние): {method} останавливается и возвращает нули (seed {seed})",
        subject="{method}")  # no oracle: code that returns zeros passes it, so it opens no gate (test_attacks)
@inputs("method,seed", [(m, 0) for m in ZERO_R_METHODS], ids=list(ZERO_R_METHODS), seed="seed")
def test_zero_rewards(dp, method, seed):
    """R ≡ 0, поэтому V^π ≡ V* ≡ 0 и уже первый проход ничего не меняет: max_s |V_1(s) − V_0(s)| = 0 < tol. Порог
    остановки — абсолютный (tol), а не доля от |V|: условие «изменение < tol·max|V|» при V ≡ 0 не выполнится никогда."""
    rng = np.random.default_rng(830 + seed)
    S, A = int(rng.integers(1, 6)), int(rng.integers(1, 4))
    P, _ = random_mdp(rng, S, A)
    R = np.zeros((S, A))
    gamma = float(rng.uniform(0.5, 1.0))
    what = f"{method}: R ≡ 0, S = {S}, A = {A}, γ = {gamma:.3f}"
    if method == "policy_evaluation":
        pi = random_policy(rng, S, A)
        V = dp.policy_evaluation(P, R, pi, gamma)
        expected = key.oracle_evaluate(P, R, pi, gamma)
    else:
        Q_star = key.q_star(P, R, gamma)
        V, policy = check_pair(dp.value_iteration(P, R, gamma), f"{what}: возвращает (V, policy)",
                               names=("V", "policy"))
        expected = key.oracle_v_star(P, R, gamma)
    V = check_values(V, S, A, what)
    check_close(V, expected, atol=1e-9, what=f"{what}: V ≡ 0",
                hint="при нулевых наградах ценность всех состояний 0; V_0 = 0 — уже ответ.")
    if method == "value_iteration":
        policy = check_policy(policy, S, A, what)
        check_greedy(policy, Q_star, key.greedy_mask(Q_star), key.reward_greedy(R), what)


def action_zero_loops(rng):
    """(P, R, γ = 1): in every state but the absorbing last one, action 0 stays put at a cost (a policy that always
    takes it never ends, and its value is −∞); every other action ends the episode with probability ≥ 1/4 a step at
    a cost, so the equiprobable policy and every greedy policy after it end."""
    S, A = int(rng.integers(3, 7)), int(rng.integers(2, 5))
    end = np.zeros(S)
    end[-1] = 1.0
    P = dyadic_rows(0.75 * rng.dirichlet(np.full(S, 0.5), size=(S, A)) + 0.25 * end)
    R = -rng.uniform(0.5, 2.0, size=(S, A))
    P[:-1, 0] = np.eye(S)[:-1]
    P[-1], R[-1] = end, 0.0
    return P, R, 1.0


@graded("Policy iteration при γ = 1, где «всегда действие 0» не кончает эпизод: старт со случайной политики "
        "(все π = 1/A) находит V* (seed {seed})", subject="policy_iteration", oracle=True)
@inputs("seed", [0])
def test_policy_iteration_gamma_one_loop(dp, seed):
    """Действие 0 оставляет агента на месте с наградой < 0: политика «всегда 0» не кончает эпизод, её ценность −∞, и
    оценивание при γ = 1 не сходится. По условию policy iteration начинает со случайной политики (все π(a|s) = 1/A):
    она кончает эпизод, и жадные политики после неё — тоже."""
    P, R, gamma = action_zero_loops(np.random.default_rng(840 + seed))
    S, A = R.shape
    V_star, Q_star = key.oracle_v_star_large(P, R, gamma), key.q_star_large(P, R, gamma)
    what = f"policy_iteration при γ = 1: S = {S}, A = {A}, действие 0 — петля на месте с наградой < 0"
    V, policy = check_pair(dp.policy_iteration(P, R, gamma), "policy_iteration возвращает (V, policy)",
                           names=("V", "policy"))
    V = check_values(V, S, A, what)
    check_close(V, V_star, atol=1e-6, what=f"{what}: V* (с точностью 1e-6)",
                hint="начинайте со случайной политики (все π(a|s) = 1/A), как сказано в docstring: при γ = 1 "
                     "политика «всегда действие 0» здесь не кончает эпизод, и её оценивание не сходится.")
    policy = check_policy(policy, S, A, what)
    check_greedy(policy, Q_star, key.greedy_mask(Q_star), key.reward_greedy(R), what)
