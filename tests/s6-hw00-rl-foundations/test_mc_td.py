"""Graded checks of the part `mc_td`: returns, Monte Carlo and TD(0) prediction.

Hand-made episodes are worked out in the tests' docstrings; randomized episodes (with hidden twins in the
grade, grader.grading.hidden) are checked against the answer key (grader.grading.key: oracles written differently from
the reference, the typical mistakes' answers). On the five-state random walk (true values 1/6 … 5/6) the errors must
fall within the bands written in the task text, over several seeds (secret ones in the grade).
"""
import copy

import numpy as np
import pytest

from grader.base.escape import one_line
from grader.grading.checks import (
    Defer,
    about,
    as_array,
    attempt,
    check_close,
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

key = answer_key("mc_td")  # oracles and the typical mistakes' answers: tests/s6-hw00-rl-foundations/key/mc_td.py


TD_MISTAKES = {
    "no_mask": "у конечного перехода бутстрапится V(s') (нет маски terminated)",
    "truncated": "оборванный эпизод считается законченным: у последнего перехода без terminated бутстрап потерян",
    "current_state": "в цели TD стоит V текущего состояния s, а не следующего s'",
    "no_gamma": "γ не учтён в цели: r + V(s') вместо r + γ·V(s')",
    "offline": "все δ эпизода посчитаны по старым V (не онлайн): обновление должно сразу влиять на следующие шаги",
    "backwards": "переходы эпизода обработаны с конца: TD(0) идёт по порядку t = 0, 1, …",
    "sign": "шаг в обратную сторону: V(s) −= α·δ вместо V(s) += α·δ",
    "skip_terminal": "на переходе с terminated = True V(s) не обновляется, а цель там — просто r",
    "V0": "V0 проигнорирован (старт с нулей)",
    "epochs": "n_epochs проигнорирован",
    "epochs_per_episode": "каждый эпизод проигран n_epochs раз подряд, "
                          "а нужно n_epochs раз пройти весь набор по порядку",
}


def td_mistakes(*args, **kwargs):
    """The typical TD(0) mistakes' answers for these arguments (the key's, by code), named for the student."""
    return {TD_MISTAKES[code]: value for code, value in key.td_mistakes(*args, **kwargs).items()}


def random_episodes(rng, n_states, n_episodes, max_len=8, truncate_some=False):
    """Episodes over states 0 … n_states − 1, with repeated states; some may end truncated."""
    episodes = []
    for _ in range(n_episodes):
        T = int(rng.integers(1, max_len + 1))
        states = rng.integers(0, n_states, size=T + 1)
        rewards = np.round(rng.normal(size=T), 3)
        terminated = not (truncate_some and rng.random() < 0.3)
        episodes.append([(int(states[t]), float(rewards[t]), int(states[t + 1]), bool(terminated and t == T - 1))
                         for t in range(T)])
    return episodes


def rms_error(V, true_values):
    V = as_array(V, "ценности V")
    inner = slice(1, len(true_values) - 1)
    return float(np.sqrt(np.mean((V[inner] - true_values[inner]) ** 2)))


def check_vector(got, n, what):
    arr = as_array(got, what)
    check_that(arr.shape == (n,), what=f"{what}: форма ответа", expected=f"[{n}]", got=fmt(arr),
               hint="верните массив ценностей длины n_states.")
    return arr


# A later check hints only at what it can tell apart: when a simpler check above already fails on the same
# function, it sends the student there first (these probes run only when the check is about to fail).

DEFER_RETURNS = Defer("сначала исправьте discounted_returns (проверки «Отдачи …» выше): V(s) в Монте-Карло — среднее "
                      "отдач G_t, и с неверными G_t неверно и V.", "discounted_returns")
SAME_MISTAKE = "ответ неверен уже там, а эта проверка видит ту же ошибку на большом числе эпизодов."
DEFER_MC = Defer("сначала исправьте не пройденные проверки mc_prediction выше, на маленьких примерах: " + SAME_MISTAKE,
                 "test_mc_first_vs_every_visit", "test_mc_constant_alpha")
DEFER_TD = Defer("сначала исправьте не пройденные проверки td0_prediction выше, на маленьких примерах: " + SAME_MISTAKE,
                 "test_td0_hand", "test_td0_truncated_bootstraps", "test_td0_random")


def returns_wrong(mc_td):
    """Whether the student's mc_prediction, called in this check, went through their discounted_returns, and that
    one is wrong (only then can wrong returns explain a wrong V)."""
    return went_through(mc_td, "mc_prediction", "discounted_returns") and not returns_ok(mc_td)


@probe(False)
def returns_ok(mc_td):
    # r = [1, 1, 3, −1], γ = 0.5: G_3 = −1, G_2 = 3 − 0.5 = 2.5, G_1 = 1 + 1.25 = 2.25, G_0 = 1 + 1.125 = 2.125
    return (matches(mc_td.discounted_returns([1.0, 0.0, 2.0], 0.9), [2.62, 1.8, 2.0])
            and matches(mc_td.discounted_returns([1.0, 1.0, 3.0, -1.0], 0.5), [2.125, 2.25, 2.5, -1.0]))


@probe(False)
def mc_small_ok(mc_td):
    """mc_prediction is right on the hand-made episodes: first-visit, every-visit and constant α (the numbers worked
    out in test_mc_first_vs_every_visit and test_mc_constant_alpha)."""
    return all(matches(mc_td.mc_prediction(copy.deepcopy(HAND), 4, 0.5, first_visit=fv, alpha=a), expected)
               for fv, a, expected in [(True, None, HAND_FIRST), (False, None, HAND_EVERY), (True, 0.5, HAND_ALPHA)])


def td_small_cases():
    """The small batches td_small_ok tries, with their answers: the hand-made episode and the truncated transition
    (worked out in their checks' docstrings), and a random batch over two epochs (the key's answer). A check that
    may probe td_small_ok calls this up front, whatever the student's answer (grader.grading.key)."""
    rng = np.random.default_rng(77)
    episodes = random_episodes(rng, 4, 5, truncate_some=True)
    V0 = rng.normal(size=4)
    return [([HAND_TD], 3, 0.5, 1.0, [0.5, 0.5, 0.5], 1, [1.0, 0.75, 0.5]),
            ([[(0, 0.0, 1, False)]], 3, 0.5, 0.9, [1.0, 2.0, 2.0], 1, [1.4, 2.0, 2.0]),
            (episodes, 4, 0.3, 0.9, V0, 2, key.td0_oracle(episodes, 4, 0.3, 0.9, V0, 2))]


@probe(False)
def td_small_ok(mc_td, cases):
    """td0_prediction is right on small batches (td_small_cases): the hand-made episode, a truncated one, epochs."""
    return all(matches(mc_td.td0_prediction(copy.deepcopy(eps), n, alpha, gamma, V0=np.array(v0, dtype=float),
                                           n_epochs=k), expected)
               for eps, n, alpha, gamma, v0, k, expected in cases)


def _theme_hint(got, mistakes, theme, formula, about_theme):
    """The check's hint: the formula, plus the sentence about the check's theme unless the answer matches a mistake
    of another kind (then that sentence would point away from it)."""
    themes = (theme,) if isinstance(theme, str) else theme
    other = any(name not in themes and matches(got, value) for name, value in mistakes.items())
    return formula + ("." if other else about_theme)


def check_values(got, n, what, visited=None):
    """The answer is a vector of n values; states never visited keep V = 0 (not 0/0 = NaN)."""
    arr = check_vector(got, n, what)
    if visited is not None and not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.isfinite(arr))
        unvisited = [int(i) for i in bad if not visited[i]]
        check_that(not unvisited, what=f"{what}: состояния, где агент ни разу не был", expected="V = 0",
                   got=fmt(arr),
                   hint=f"у состояний {unvisited} нет ни одного посещения: N(s) = 0, и среднее "
                        "«сумма / N» даёт 0/0 = NaN. По условию такие состояния остаются с V = 0: "
                        "делите только там, где N(s) > 0.")
    return arr


# ---- discounted returns ---------------------------------------------------------------------------


@graded("Отдачи робота-курьера: r = [1, 0, 2], γ = 0.9 → G = [2.62, 1.8, 2] (и когда награды — целые числа)",
        subject="discounted_returns")
def test_returns_courier(mc_td):
    """G_2 = 2;  G_1 = 0 + 0.9·2 = 1.8;  G_0 = 1 + 0.9·1.8 = 2.62."""
    rewards = [1.0, 0.0, 2.0]
    check_close(mc_td.discounted_returns(rewards, 0.9), [2.62, 1.8, 2.0], what="discounted_returns([1, 0, 2], γ = 0.9)",
                hint="проход с конца: G_{T−1} = r_{T−1}, G_t = r_t + γ·G_{t+1}.",
                mistakes=key.returns_mistakes([1.0, 0.0, 2.0], 0.9))
    check_that(rewards == [1.0, 0.0, 2.0], what="discounted_returns не меняет rewards", got=str(rewards))
    for ints, text in (([1, 0, 2], "список целых чисел"), (np.array([1, 0, 2], dtype=np.int64), "массив np.int64")):
        check_close(mc_td.discounted_returns(ints, 0.9), [2.62, 1.8, 2.0],
                    what=f"discounted_returns([1, 0, 2], γ = 0.9): награды — {text}",
                    hint="награды бывают целыми: считайте отдачи в float — np.asarray(rewards, dtype=float); массив G, "
                         "созданный как zeros_like от целых наград, тоже целый и округляет G_t.",
                    mistakes={"G — целый массив (zeros_like от целых наград или rewards без dtype=float): "
                              "отдачи округлены до целых": [2.0, 1.0, 2.0]})


# at γ = 0 the rewards themselves are the answer: a function returning its input passes, so these count only with
# a passed check of the general case (guard)
@graded("Отдачи при γ = {gamma}: {expected}", subject="discounted_returns", guard=True)
@pytest.mark.parametrize("gamma,expected", [(1.0, [4.0, 3.0, 2.0, -1.0]), (0.0, [1.0, 1.0, 3.0, -1.0])],
                         ids=["gamma1", "gamma0"])
def test_returns_edge_gammas(mc_td, gamma, expected):
    """r = [1, 1, 3, −1]: при γ = 1 — суммы наград до конца эпизода, при γ = 0 — сами награды."""
    check_close(mc_td.discounted_returns(np.array([1.0, 1.0, 3.0, -1.0]), gamma), expected,
                what=f"discounted_returns([1, 1, 3, −1], γ = {gamma})",
                hint="G_t = r_t + γ·G_{t+1}" + ("; при γ = 0 будущее не учитывается вовсе: G_t = r_t." if gamma == 0
                                                else "; при γ = 1 это сумма наград от шага t до конца эпизода."),
                mistakes=key.returns_mistakes([1.0, 1.0, 3.0, -1.0], gamma))


@graded("Отдачи случайных эпизодов против явной суммы Σ γ^k r_{t+k} (float32, float64, списки; seed {seed})",
        subject="discounted_returns", oracle=True)
@inputs("seed,as_list", [(0, False), (1, True)], ids=["0", "1"], seed="seed")
def test_returns_random(mc_td, seed, as_list):
    rng = np.random.default_rng(900 + seed)
    T = int(rng.integers(5, 40))
    rewards = rng.normal(size=T).astype(np.float32)
    gamma = float(rng.uniform(0.5, 1.0))
    arg = rewards.tolist() if as_list else rewards.copy()
    got = mc_td.discounted_returns(arg, gamma)
    expected = key.returns_oracle(rewards, gamma)
    mistakes = key.returns_mistakes(rewards, gamma)
    hint = "G_t = r_t + γ·G_{t+1}, проход с конца эпизода."
    if not matches(got, expected, 1e-5) and matches(
            attempt(None, mc_td.discounted_returns, rewards.astype(float), gamma), expected, 1e-5):
        hint = ("на массиве float64 ответ верен, а "
                + ("на списке Python — нет: начните с np.asarray(rewards, dtype=float)." if as_list
                   else "на float32 — нет: считайте в float64, np.asarray(rewards, dtype=float)."))
    check_close(got, expected, atol=1e-5, rtol=1e-5,
                what=f"discounted_returns, T = {T}, γ = {gamma:.3f}"
                     + (", вход — список" if as_list else ", вход float32"),
                hint=hint, mistakes=mistakes)
    check_unchanged(rewards, np.asarray(arg, dtype=np.float32), name="rewards", function="discounted_returns")
    arg = rewards.astype(float)  # float64: np.asarray(arg, dtype=float) is the caller's array itself, not a copy
    got = mc_td.discounted_returns(arg, gamma)
    check_unchanged(rewards.astype(float), arg, name="rewards", function="discounted_returns")
    check_close(got, expected, atol=1e-9, what=f"discounted_returns, T = {T}, γ = {gamma:.3f}, вход float64",
                hint="G_t = r_t + γ·G_{t+1}, проход с конца эпизода.", mistakes=mistakes)


# ---- Monte Carlo ---------------------------------------------------------------------------------

# state 0 repeats in the first episode; state 3 is terminal (it only appears as s_next)
EP1 = [(0, 1.0, 1, False), (1, 0.0, 0, False), (0, 2.0, 2, False), (2, 3.0, 3, True)]
EP2 = [(1, 4.0, 0, False), (0, 0.0, 3, True)]
HAND = [EP1, EP2]
HAND_FIRST = [0.9375, 2.875, 3.0, 0.0]  # the worked numbers of test_mc_first_vs_every_visit, test_mc_constant_alpha
HAND_EVERY = [(1.875 + 3.5 + 0.0) / 3, 2.875, 3.0, 0.0]
HAND_ALPHA = [0.46875, 2.4375, 1.5, 0.0]
HAND_TEXT = ("эпизоды [(0, 1, 1), (1, 0, 0), (0, 2, 2), (2, 3, 3, конец)] и [(1, 4, 0), (0, 0, 3, конец)] "
             "— переходы (s, r, s')")


@graded("Монте-Карло на двух эпизодах, {visit}: V(0) {v0}", subject="mc_prediction")
@pytest.mark.parametrize("first_visit,visit,v0",
                         [(True, "first-visit", "= 0.9375"), (False, "every-visit", "≈ 1.7917")],
                         ids=["first", "every"])
def test_mc_first_vs_every_visit(mc_td, first_visit, visit, v0):
    """γ = 0.5. Эпизод 1: s = 0, 1, 0, 2, r = 1, 0, 2, 3 → G = [1.875, 1.75, 3.5, 3];
    эпизод 2: s = 1, 0, r = 4, 0 → G = [4, 0]. Состояние 3 — конечное.
        first-visit:  V(0) = (1.875 + 0) / 2 = 0.9375;        V(1) = (1.75 + 4) / 2 = 2.875;  V(2) = 3
        every-visit:  V(0) = (1.875 + 3.5 + 0) / 3 ≈ 1.7917;  V(1) = 2.875;                   V(2) = 3
    """
    episodes = copy.deepcopy(HAND)
    first, every = HAND_FIRST, HAND_EVERY
    got = check_values(mc_td.mc_prediction(episodes, 4, 0.5, first_visit=first_visit), 4,
                       f"mc_prediction, {visit}, γ = 0.5", visited=[True, True, True, False])
    expected = first if first_visit else every
    hint = ("first-visit — только первое посещение состояния в эпизоде, every-visit — все посещения; "
            "V(s) — среднее учтённых отдач G_t. Отдачи эпизодов: G = [1.875, 1.75, 3.5, 3] и [4, 0].")
    if not matches(got, expected) and returns_wrong(mc_td):
        hint = DEFER_RETURNS
    check_close(got, expected, what=f"mc_prediction, {visit}, γ = 0.5; {HAND_TEXT}", hint=hint,
                mistakes=key.mc_mistakes(HAND, 4, 0.5, first_visit))
    check_that(episodes == HAND, what="mc_prediction не меняет эпизоды", expected=one_line(HAND, 80),
               got=one_line(episodes, 80))


@graded("Монте-Карло с постоянным шагом α = 0.5 на тех же эпизодах: V = [0.46875, 2.4375, 1.5, 0]",
        subject="mc_prediction")
def test_mc_constant_alpha(mc_td):
    """first-visit, γ = 0.5, α = 0.5, V = 0 в начале; V(s) ← V(s) + α·(G_t − V(s)) по порядку шагов:
        эпизод 1: V(0) = 0.5·1.875 = 0.9375;  V(1) = 0.5·1.75 = 0.875;  V(2) = 0.5·3 = 1.5
        эпизод 2: V(1) = 0.875 + 0.5·(4 − 0.875) = 2.4375;  V(0) = 0.9375 + 0.5·(0 − 0.9375) = 0.46875
    """
    got = check_values(mc_td.mc_prediction(copy.deepcopy(HAND), 4, 0.5, first_visit=True, alpha=0.5), 4,
                       "mc_prediction, α = 0.5", visited=[True, True, True, False])
    expected = HAND_ALPHA
    hint = "с заданным alpha: V(s) ← V(s) + α·(G_t − V(s)) для каждого учтённого шага, эпизод за эпизодом."
    if not matches(got, expected):
        if returns_wrong(mc_td):
            hint = DEFER_RETURNS
        elif not matches(attempt(None, mc_td.mc_prediction, copy.deepcopy(HAND), 4, 0.5, first_visit=True),
                        HAND_FIRST):
            hint = Defer("сначала исправьте проверку «Монте-Карло на двух эпизодах» выше: без alpha ответ тоже "
                         "неверен, значит, ошибка — в выборе учитываемых шагов или в отдачах, а не в шаге α.",
                         "test_mc_first_vs_every_visit")
    check_close(got, expected, what=f"mc_prediction, first-visit, γ = 0.5, α = 0.5; {HAND_TEXT}", hint=hint,
                mistakes=key.mc_mistakes(HAND, 4, 0.5, True, alpha=0.5))


@graded("Монте-Карло на случайных эпизодах против списков отдач по состояниям (seed {seed})", subject="mc_prediction",
        oracle=True)
@inputs("seed", [0, 1, 2])
def test_mc_random(mc_td, seed):
    rng = np.random.default_rng(1000 + seed)
    n = 5
    episodes = random_episodes(rng, n, 12)
    gamma = float(rng.uniform(0.6, 1.0))
    frozen = copy.deepcopy(episodes)
    small_ok = None  # probed once, and only when an answer is wrong

    def hint_for(text):
        nonlocal small_ok
        if small_ok is None:
            small_ok = not returns_wrong(mc_td), mc_small_ok(mc_td)
        return text if all(small_ok) else (DEFER_RETURNS if not small_ok[0] else DEFER_MC)

    for first_visit in (True, False):
        name = "first-visit" if first_visit else "every-visit"
        expected = key.mc_oracle(frozen, n, gamma, first_visit)
        mistakes = key.mc_mistakes(frozen, n, gamma, first_visit)
        forwards = key.mc_alpha_oracle(frozen, n, gamma, 0.2, first_visit)
        backwards = key.mc_alpha_oracle(frozen, n, gamma, 0.2, first_visit, backwards=True)
        alpha_mistakes = key.mc_mistakes(frozen, n, gamma, first_visit, alpha=0.2)
        got = mc_td.mc_prediction(episodes, n, gamma, first_visit=first_visit)
        text = "V(s) — среднее отдач G_t по учтённым шагам всех эпизодов."
        check_close(got, expected, what=f"mc_prediction, {name}, 12 эпизодов, γ = {gamma:.3f}",
                    hint=text if matches(got, expected) else hint_for(text),
                    mistakes=mistakes)
        got = check_vector(mc_td.mc_prediction(episodes, n, gamma, first_visit=first_visit, alpha=0.2), n,
                           "mc_prediction с alpha")
        if not np.allclose(got, backwards, atol=1e-8):  # every-visit may legitimately visit an episode backwards
            text = "V(s) ← V(s) + α·(G_t − V(s)) для каждого учтённого шага, эпизод за эпизодом."
            check_close(got, forwards, what=f"mc_prediction, {name}, α = 0.2, 12 эпизодов, γ = {gamma:.3f}",
                        hint=text if matches(got, forwards) else hint_for(text),
                        mistakes=alpha_mistakes)
    check_that(episodes == frozen, what="mc_prediction не меняет эпизоды")



@graded("Монте-Карло: α = 0 — постоянный шаг 0 (V остаётся нулевой), а не «alpha не задан»; без first_visit и alpha "
        "— first-visit средние (seed {seed})", subject="mc_prediction", oracle=True)
@inputs("seed", [0])
def test_mc_alpha_zero_and_defaults(mc_td, seed):
    """alpha = 0: V(s) += 0·(G_t − V(s)) ничего не меняет, V = 0 везде (выборочные средние — только при alpha=None).
    Вызов mc_prediction(episodes, n_states, gamma) без first_visit и alpha — значения по умолчанию из сигнатуры:
    first_visit=True, alpha=None."""
    rng = np.random.default_rng(1200 + seed)
    n = 5
    episodes = random_episodes(rng, n, 8)
    gamma = float(rng.uniform(0.6, 1.0))
    frozen = copy.deepcopy(episodes)
    zeros, first = key.mc_alpha_oracle(frozen, n, gamma, 0.0), key.mc_oracle(frozen, n, gamma, True)
    for alpha in (0.0, 0):
        got = mc_td.mc_prediction(copy.deepcopy(episodes), n, gamma, first_visit=True, alpha=alpha)
        check_close(got, zeros, atol=1e-12,
                    what=f"mc_prediction, first-visit, alpha = {alpha!r}, 8 эпизодов, γ = {gamma:.3f}",
                    hint="alpha = 0 задан: это постоянный шаг 0, V(s) += 0·(G_t − V(s)), и V остаётся нулевой. "
                         "Выборочные средние — только при alpha is None; условие «if alpha:» принимает 0 за «не "
                         "задан», нужно «if alpha is None:».")
    got = mc_td.mc_prediction(episodes, n, gamma)
    check_close(got, first, what=f"mc_prediction(episodes, {n}, γ = {gamma:.3f}) без first_visit и alpha",
                hint="значения по умолчанию — как в сигнатуре из условия: first_visit=True (только первое посещение "
                     "состояния в эпизоде), alpha=None (выборочные средние).")
    check_that(episodes == frozen, what="mc_prediction не меняет эпизоды")

# ---- TD(0) -----------------------------------------------------------------------------------------

HAND_TD = [(0, 1.0, 1, False), (1, 0.0, 0, False), (0, 1.0, 2, True)]


@graded("TD(0) на одном эпизоде: обновления онлайн по порядку, конечное состояние не бутстрапится",
        subject="td0_prediction")
def test_td0_hand(mc_td):
    """V0 = [0.5, 0.5, 0.5], α = 0.5, γ = 1; эпизод (0, +1, 1), (1, 0, 0), (0, +1, 2, конец):
        V(0) ← 0.5 + 0.5·(1 + 0.5 − 0.5) = 1.0
        V(1) ← 0.5 + 0.5·(0 + V(0) − 0.5) = 0.75        (уже новое V(0) = 1.0)
        V(0) ← 1.0 + 0.5·(1 + 0 − 1.0) = 1.0             (2 — конечное: его V0 = 0.5 не бутстрапится)
    """
    V0 = np.array([0.5, 0.5, 0.5])
    before = V0.copy()
    episode = list(HAND_TD)
    got = check_vector(mc_td.td0_prediction([episode], 3, 0.5, 1.0, V0=V0), 3, "td0_prediction")
    check_unchanged(before, V0, name="V0", function="td0_prediction")
    check_close(got, [1.0, 0.75, 0.5],
                what="td0_prediction: V0 = [0.5, 0.5, 0.5], α = 0.5, γ = 1, "
                     "эпизод (0, +1, 1), (1, 0, 0), (0, +1, 2, конец)",
                hint="δ = r + γ·V(s')·(1 − terminated) − V(s); V(s) += α·δ сразу после каждого перехода.",
                mistakes=td_mistakes([HAND_TD], 3, 0.5, 1.0, before, only=[
                    "no_mask", "current_state", "offline", "backwards", "sign", "V0"]))


@graded("TD(0): оборванный эпизод (terminated = False) бутстрапит V(s_next), законченный — нет (V0 и целыми числами)",
        subject="td0_prediction")
def test_td0_truncated_bootstraps(mc_td):
    """V0 = [1, 2, 2], α = 0.5, γ = 0.9. Переход (0, 0, 1, terminated=False): V(0) = 1 + 0.5·(0 + 0.9·2 − 1) = 1.4.
    Тот же переход с terminated=True: V(0) = 1 + 0.5·(0 − 1) = 0.5."""
    V0 = [1.0, 2.0, 2.0]
    truncated, terminated = [[(0, 0.0, 1, False)]], [[(0, 0.0, 1, True)]]
    got = mc_td.td0_prediction(copy.deepcopy(truncated), 3, 0.5, 0.9, V0=list(V0))
    mistakes = td_mistakes(truncated, 3, 0.5, 0.9, V0, only=["truncated", "current_state", "no_gamma", "sign", "V0"])
    check_close(got, [1.4, 2.0, 2.0], what="td0_prediction, V0 = [1, 2, 2], α = 0.5, γ = 0.9, единственный переход "
                                           "(0, 0, 1) оборван (terminated = False)",
                hint=_theme_hint(got, mistakes, TD_MISTAKES["truncated"], "δ = r + γ·V(s')·(1 − terminated) − V(s)",
                                 ": конец списка переходов ещё не конец задачи, "
                                 "бутстрап отключает только terminated = True."),
                mistakes=mistakes)
    got = mc_td.td0_prediction(copy.deepcopy(truncated), 3, 0.5, 0.9, V0=[1, 2, 2])
    check_close(got, [1.4, 2.0, 2.0],
                what="td0_prediction, тот же оборванный переход, V0 = [1, 2, 2] — список целых чисел",
                hint="V0 бывает целым: копируйте его в float — np.array(V0, dtype=float); копия без dtype=float "
                     "(np.array, np.asarray) — тоже целый массив, и V(s) += α·δ округляется.",
                mistakes={"V — целый массив: V0 скопирован без dtype=float (np.array или np.asarray), и каждое "
                          "обновление V(s) += α·δ округлено до целого": [1.0, 2.0, 2.0]})
    got = mc_td.td0_prediction(copy.deepcopy(terminated), 3, 0.5, 0.9, V0=list(V0))
    mistakes = td_mistakes(terminated, 3, 0.5, 0.9, V0, only=["no_mask", "skip_terminal", "sign", "V0"])
    check_close(got, [0.5, 2.0, 2.0], what="td0_prediction, V0 = [1, 2, 2], α = 0.5, γ = 0.9, переход (0, 0, 1) в "
                                           "конечное состояние (terminated = True)",
                hint=_theme_hint(got, mistakes, (TD_MISTAKES["no_mask"], TD_MISTAKES["skip_terminal"]),
                                 "δ = r + γ·V(s')·(1 − terminated) − V(s), V(s) += α·δ",
                                 ": у конечного состояния будущего нет, цель — просто r, и V(s) += α·(r − V(s))."),
                mistakes=mistakes)


@graded("TD(0) на случайных эпизодах (часть оборвана), n_epochs = {n_epochs}, против прохода по плоскому батчу",
        subject="td0_prediction", oracle=True)
@inputs("n_epochs,seed", [(1, 1), (3, 3)], ids=["epochs1", "epochs3"], seed="seed")
def test_td0_random(mc_td, n_epochs, seed):
    rng = np.random.default_rng(1100 + seed)
    n = 6
    episodes = random_episodes(rng, n, 10, truncate_some=True)
    frozen = copy.deepcopy(episodes)
    V0 = rng.normal(size=n)
    V0_before = V0.copy()
    alpha, gamma = 0.3, float(rng.uniform(0.6, 1.0))
    kwargs = {} if n_epochs == 1 else {"n_epochs": n_epochs}
    expected = key.td0_oracle(frozen, n, alpha, gamma, V0_before, n_epochs)
    mistakes = td_mistakes(frozen, n, alpha, gamma, V0_before, n_epochs)
    got = mc_td.td0_prediction(episodes, n, alpha, gamma, V0=V0, **kwargs)
    check_unchanged(V0_before, V0, name="V0", function="td0_prediction")
    check_close(got, expected,
                what=f"td0_prediction, 10 эпизодов, α = {alpha}, γ = {gamma:.3f}, n_epochs = {n_epochs}",
                hint="δ = r + γ·V(s')·(1 − terminated) − V(s), V(s) += α·δ; переходы по порядку, эпизод за эпизодом"
                     + ("; n_epochs — столько раз пройти весь набор." if n_epochs > 1 else "."),
                mistakes=mistakes)
    check_that(episodes == frozen, what="td0_prediction не меняет эпизоды")


@graded("Пакетный TD(0) (малый α, много эпох) сходится к оценке по модели из данных (certainty equivalence)",
        subject="td0_prediction")
@inputs("seed", [50])
def test_batch_td_certainty_equivalence(mc_td, envs, seed):
    episodes = envs.random_walk_episodes(10, seed=seed)
    expected = key.certainty_equivalence(episodes, 7, 1.0)
    small = td_small_cases()
    mistakes = td_mistakes(episodes, 7, 0.01, 1.0, None, 500, only=["epochs", "epochs_per_episode"])
    got = mc_td.td0_prediction(episodes, 7, 0.01, 1.0, n_epochs=500)
    hint = ("при повторном проигрывании одного батча TD(0) сходится к ценностям модели, оценённой по данным "
            "(частоты переходов и средние награды); проверьте, что n_epochs действительно повторяет проход.")
    if not matches(got, expected, 0.02) and not td_small_ok(mc_td, small):
        hint = DEFER_TD
    check_close(got, expected, atol=0.02, what="td0_prediction(10 эпизодов блуждания, α = 0.01, n_epochs = 500)",
                hint=hint, mistakes=mistakes)


# ---- the random walk ---------------------------------------------------------------------------

RW_EPISODES = 300
MC_BAND, MC_EVERY_BAND, MC_ALPHA_BAND, TD_BAND = 0.10, 0.12, 0.20, 0.13


@graded("Случайное блуждание, 300 эпизодов: RMS-ошибка MC < 0.10 (first-visit), < 0.12 (every-visit), "
        "< 0.20 (α = 0.05) (seed {seed})", subject="mc_prediction")
@inputs("seed", [0, 1, 2], behaviour=True)
def test_random_walk_mc(mc_td, envs, seed):
    walk = envs.RandomWalk()
    true = walk.true_values()
    episodes = envs.random_walk_episodes(RW_EPISODES, seed=seed)
    for kwargs, band, name in [({}, MC_BAND, "first-visit"), ({"first_visit": False}, MC_EVERY_BAND, "every-visit"),
                               ({"alpha": 0.05}, MC_ALPHA_BAND, "first-visit, α = 0.05")]:
        V = check_vector(mc_td.mc_prediction(episodes, 7, 1.0, **kwargs), 7, "mc_prediction")
        err = rms_error(V, true)
        hint = "истинные ценности 1/6 … 5/6; отдача — сумма наград до конца эпизода (γ = 1)."
        if not err < band:
            hint = DEFER_RETURNS if returns_wrong(mc_td) else hint if mc_small_ok(mc_td) else DEFER_MC
        check_that(err < band, what=f"mc_prediction ({name}) на случайном блуждании: RMS-ошибка по состояниям A…E",
                   expected=f"< {band}", got=f"{err:.4f}; V = {fmt(V, 3)}", hint=hint)


@graded("Случайное блуждание, 300 эпизодов: RMS-ошибка TD(0) (α = 0.05, V0 = 0.5 везде) < 0.13 (seed {seed})",
        subject="td0_prediction")
@inputs("seed", [0, 1, 2], behaviour=True)
def test_random_walk_td(mc_td, envs, seed):
    true = envs.RandomWalk().true_values()
    episodes = envs.random_walk_episodes(RW_EPISODES, seed=seed)
    small = td_small_cases()
    V = check_vector(mc_td.td0_prediction(episodes, 7, 0.05, 1.0, V0=np.full(7, 0.5)), 7, "td0_prediction")
    err = rms_error(V, true)
    hint = "у конечных состояний 0 и 6 стоит V0 = 0.5, но бутстрапить их нельзя: при terminated цель — просто r."
    if not err < TD_BAND and not td_small_ok(mc_td, small):
        hint = DEFER_TD
    check_that(err < TD_BAND, what="td0_prediction на случайном блуждании (V0 = 0.5 и в конечных состояниях)",
               expected=f"< {TD_BAND}", got=f"{err:.4f}; V = {fmt(V, 3)}", hint=hint)


@graded("Случайное блуждание: после 20 эпизодов TD(0) (α = 0.1) точнее Монте-Карло, среднее по 30 запускам",
        subject=("td0_prediction", "mc_prediction"))
@inputs("seed", [2000], behaviour=True)
def test_td_learns_faster_early(mc_td, envs, seed):
    true = envs.RandomWalk().true_values()
    small = td_small_cases()
    td_err, mc_err = [], []
    for run in range(30):
        episodes = envs.random_walk_episodes(20, seed=seed + run)
        td_err.append(rms_error(mc_td.td0_prediction(episodes, 7, 0.1, 1.0, V0=np.full(7, 0.5)), true))
        mc_err.append(rms_error(mc_td.mc_prediction(episodes, 7, 1.0), true))
    td, mc = float(np.mean(td_err)), float(np.mean(mc_err))
    hint = ("TD(0) учится на каждом шаге, бутстрапя из соседей, и поэтому на коротких данных обычно точнее. "
            "Проверьте цель r + γ·V(s') и маску конечных состояний.")
    if not (td < 0.09 and td < mc):
        if not td_small_ok(mc_td, small):
            hint = DEFER_TD
        elif returns_wrong(mc_td) or not mc_small_ok(mc_td):
            hint = DEFER_RETURNS if returns_wrong(mc_td) else DEFER_MC
    with about("td0_prediction" if td >= 0.09 else "mc_prediction"):  # TD inaccurate itself, or MC not behind it
        check_that(td < 0.09 and td < mc,
                   what="средняя RMS-ошибка после 20 эпизодов: TD(0) α = 0.1 против MC (средние отдач)",
                   expected="TD < 0.09 и TD < MC", got=f"TD {td:.4f}, MC {mc:.4f}", hint=hint)
