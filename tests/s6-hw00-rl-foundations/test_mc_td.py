"""Graded checks of the part `mc_td`: returns, Monte Carlo and TD(0) prediction.

Hand-made episodes are worked out in the tests' docstrings; randomized episodes are checked against
oracles written differently from the reference (returns as an explicit sum of discounted rewards,
Monte Carlo as lists of returns per state, batch TD(0) against the certainty-equivalence estimate of
the textbook). On the five-state random walk (true values 1/6 … 5/6) the errors must fall within the
bands written in the task text, over several seeds.
"""
import copy

import numpy as np
import pytest

from grader.checks import as_array, check_close, check_that, check_unchanged, fmt, graded

# ---- oracles, written differently from the reference -----------------------------------------


def returns_oracle(rewards, gamma):
    """G_t = Σ_k γ^k r_{t+k}, as an explicit sum for every t."""
    r = np.asarray(rewards, dtype=float)
    return np.array([sum(gamma ** k * r[t + k] for k in range(len(r) - t)) for t in range(len(r))])


def mc_oracle(episodes, n_states, gamma, first_visit=True):
    """Sample averages from the list of returns collected for each state."""
    collected = [[] for _ in range(n_states)]
    for episode in episodes:
        G = returns_oracle([tr[1] for tr in episode], gamma)
        seen = set()
        for t, tr in enumerate(episode):
            s = tr[0]
            if first_visit and s in seen:
                continue
            seen.add(s)
            collected[s].append(G[t])
    return np.array([np.mean(x) if x else 0.0 for x in collected])


def mc_alpha_oracle(episodes, n_states, gamma, alpha, first_visit=True, backwards=False):
    """Constant-α Monte Carlo, visiting an episode's steps forwards (or backwards)."""
    V = np.zeros(n_states)
    for episode in episodes:
        G = returns_oracle([tr[1] for tr in episode], gamma)
        states = [tr[0] for tr in episode]
        counted = [t for t in range(len(states)) if not first_visit or states.index(states[t]) == t]
        for t in (reversed(counted) if backwards else counted):
            V[states[t]] = (1 - alpha) * V[states[t]] + alpha * G[t]
    return V


def td0_oracle(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    """TD(0) over the flattened batch: arrays of s, r, s', done, replayed n_epochs times."""
    flat = [tr for episode in episodes for tr in episode]
    s, r, s_next, done = (np.array([tr[i] for tr in flat]) for i in range(4))
    V = np.zeros(n_states) if V0 is None else np.array(V0, dtype=float)
    for _ in range(n_epochs):
        for i in range(len(flat)):
            V[s[i]] = (1 - alpha) * V[s[i]] + alpha * (r[i] + gamma * (0.0 if done[i] else V[s_next[i]]))
    return V


def certainty_equivalence(episodes, n_states, gamma):
    """The value of the maximum-likelihood model of the batch: what batch TD(0) converges to."""
    counts = np.zeros((n_states, n_states + 1))  # the extra column: "the episode terminated"
    reward_sum, visits = np.zeros(n_states), np.zeros(n_states)
    for episode in episodes:
        for s, r, s_next, terminated in episode:
            visits[s] += 1
            reward_sum[s] += r
            counts[s, n_states if terminated else s_next] += 1
    idx = np.flatnonzero(visits)
    P_hat = counts[np.ix_(idx, idx)] / visits[idx, None]
    V = np.zeros(n_states)
    V[idx] = np.linalg.solve(np.eye(len(idx)) - gamma * P_hat, reward_sum[idx] / visits[idx])
    return V


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


# ---- discounted returns ---------------------------------------------------------------------------


@graded("Отдачи робота-курьера: r = [1, 0, 2], γ = 0.9 → G = [2.62, 1.8, 2]")
def test_returns_courier(mc_td):
    """G_2 = 2;  G_1 = 0 + 0.9·2 = 1.8;  G_0 = 1 + 0.9·1.8 = 2.62."""
    rewards = [1.0, 0.0, 2.0]
    check_close(mc_td.discounted_returns(rewards, 0.9), [2.62, 1.8, 2.0], what="discounted_returns([1, 0, 2], γ = 0.9)",
                hint="проход с конца: G_{T−1} = r_{T−1}, G_t = r_t + γ·G_{t+1}.",
                mistakes={"отдача накоплена с начала эпизода (G_t = r_t + γ·G_{t−1})": [1.0, 0.9, 2.81],
                          "γ не учтён": [3.0, 2.0, 2.0],
                          "отдачи в обратном порядке": [2.0, 1.8, 2.62],
                          "γ в степени номера шага от начала эпизода": [1.0 + 0.0 + 0.81 * 2, 0.9 * 0 + 0.81 * 2, 0.81 * 2]})
    check_that(rewards == [1.0, 0.0, 2.0], what="discounted_returns не меняет rewards", got=str(rewards))


@graded("Отдачи при γ = {gamma}: {expected}")
@pytest.mark.parametrize("gamma,expected", [(1.0, [4.0, 3.0, 2.0, -1.0]), (0.0, [1.0, 1.0, 3.0, -1.0])],
                         ids=["gamma1", "gamma0"])
def test_returns_edge_gammas(mc_td, gamma, expected):
    """r = [1, 1, 3, −1]: при γ = 1 — суммы наград до конца эпизода, при γ = 0 — сами награды."""
    check_close(mc_td.discounted_returns(np.array([1.0, 1.0, 3.0, -1.0]), gamma), expected,
                what=f"discounted_returns([1, 1, 3, −1], γ = {gamma})",
                hint="G_t = r_t + γ·G_{t+1}; при γ = 0 будущее не учитывается вовсе.")


@graded("Отдачи случайных эпизодов против явной суммы Σ γ^k r_{t+k} (float32, списки; seed {seed})")
@pytest.mark.parametrize("seed", [0, 1])
def test_returns_random(mc_td, seed):
    rng = np.random.default_rng(900 + seed)
    T = int(rng.integers(5, 40))
    rewards = rng.normal(size=T).astype(np.float32)
    gamma = float(rng.uniform(0.5, 1.0))
    arg = rewards.tolist() if seed == 1 else rewards.copy()
    got = mc_td.discounted_returns(arg, gamma)
    check_close(got, returns_oracle(rewards, gamma), atol=1e-5, rtol=1e-5,
                what=f"discounted_returns, T = {T}, γ = {gamma:.3f}" + (", вход — список" if seed == 1 else ", вход float32"))
    check_unchanged(rewards, np.asarray(arg, dtype=np.float32), name="rewards", function="discounted_returns")


# ---- Monte Carlo ---------------------------------------------------------------------------------

# state 0 repeats in the first episode; state 3 is terminal (it only appears as s_next)
EP1 = [(0, 1.0, 1, False), (1, 0.0, 0, False), (0, 2.0, 2, False), (2, 3.0, 3, True)]
EP2 = [(1, 4.0, 0, False), (0, 0.0, 3, True)]
HAND = [EP1, EP2]
HAND_TEXT = ("эпизоды [(0, 1, 1), (1, 0, 0), (0, 2, 2), (2, 3, 3, конец)] и [(1, 4, 0), (0, 0, 3, конец)] "
             "— переходы (s, r, s')")


@graded("Монте-Карло на двух эпизодах: first-visit V(0) = 0.9375, every-visit V(0) ≈ 1.7917")
@pytest.mark.parametrize("first_visit", [True, False], ids=["first", "every"])
def test_mc_first_vs_every_visit(mc_td, first_visit):
    """γ = 0.5. Эпизод 1: s = 0, 1, 0, 2, r = 1, 0, 2, 3 → G = [1.875, 1.75, 3.5, 3];
    эпизод 2: s = 1, 0, r = 4, 0 → G = [4, 0]. Состояние 3 — конечное.
        first-visit:  V(0) = (1.875 + 0) / 2 = 0.9375;        V(1) = (1.75 + 4) / 2 = 2.875;  V(2) = 3
        every-visit:  V(0) = (1.875 + 3.5 + 0) / 3 ≈ 1.7917;  V(1) = 2.875;                   V(2) = 3
    """
    episodes = copy.deepcopy(HAND)
    first = [0.9375, 2.875, 3.0, 0.0]
    every = [(1.875 + 3.5 + 0.0) / 3, 2.875, 3.0, 0.0]
    got = check_vector(mc_td.mc_prediction(episodes, 4, 0.5, first_visit=first_visit), 4, "mc_prediction")
    name = "first-visit" if first_visit else "every-visit"
    check_close(got, first if first_visit else every, what=f"mc_prediction, {name}, γ = 0.5; {HAND_TEXT}",
                hint="first-visit — только первое посещение состояния в эпизоде, every-visit — все посещения; "
                     "V(s) — среднее учтённых отдач G_t. Отдачи эпизодов: G = [1.875, 1.75, 3.5, 3] и [4, 0].",
                mistakes={"every-visit вместо first-visit": every, "first-visit вместо every-visit": first,
                          "учтено последнее посещение, а не первое": [1.75, 2.875, 3.0, 0.0],
                          "посещения запоминаются через все эпизоды (множество посещённых не обнуляется в начале "
                          "эпизода)": [1.875, 1.75, 3.0, 0.0],
                          "отдачи без дисконта (γ = 1)": mc_oracle(HAND, 4, 1.0, first_visit),
                          "в V записаны награды, а не отдачи": mc_oracle([[(s, r, r, True) for s, r, _, _ in ep]
                                                                          for ep in HAND], 4, 0.0, first_visit)})
    check_that(episodes == HAND, what="mc_prediction не меняет эпизоды", expected=str(HAND)[:80], got=str(episodes)[:80])


@graded("Монте-Карло с постоянным шагом α = 0.5 на тех же эпизодах: V = [0.46875, 2.4375, 1.5, 0]")
def test_mc_constant_alpha(mc_td):
    """first-visit, γ = 0.5, α = 0.5, V = 0 в начале; V(s) ← V(s) + α·(G_t − V(s)) по порядку шагов:
        эпизод 1: V(0) = 0.5·1.875 = 0.9375;  V(1) = 0.5·1.75 = 0.875;  V(2) = 0.5·3 = 1.5
        эпизод 2: V(1) = 0.875 + 0.5·(4 − 0.875) = 2.4375;  V(0) = 0.9375 + 0.5·(0 − 0.9375) = 0.46875
    """
    got = check_vector(mc_td.mc_prediction(copy.deepcopy(HAND), 4, 0.5, first_visit=True, alpha=0.5), 4, "mc_prediction")
    check_close(got, [0.46875, 2.4375, 1.5, 0.0], what=f"mc_prediction, first-visit, γ = 0.5, α = 0.5; {HAND_TEXT}",
                hint="с заданным alpha шаг постоянный: V(s) += α·(G_t − V(s)), без счётчиков посещений.",
                mistakes={"alpha проигнорирован: выборочные средние": [0.9375, 2.875, 3.0, 0.0]})


@graded("Монте-Карло на случайных эпизодах против списков отдач по состояниям (seed {seed})")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mc_random(mc_td, seed):
    rng = np.random.default_rng(1000 + seed)
    n = 5
    episodes = random_episodes(rng, n, 12)
    gamma = float(rng.uniform(0.6, 1.0))
    frozen = copy.deepcopy(episodes)
    for first_visit in (True, False):
        name = "first-visit" if first_visit else "every-visit"
        check_close(mc_td.mc_prediction(episodes, n, gamma, first_visit=first_visit), mc_oracle(frozen, n, gamma, first_visit),
                    what=f"mc_prediction, {name}, 12 эпизодов, γ = {gamma:.3f}",
                    mistakes={"every-visit вместо first-visit": mc_oracle(frozen, n, gamma, False),
                              "first-visit вместо every-visit": mc_oracle(frozen, n, gamma, True)} if seed else None)
        got = check_vector(mc_td.mc_prediction(episodes, n, gamma, first_visit=first_visit, alpha=0.2), n,
                           "mc_prediction с alpha")
        forwards = mc_alpha_oracle(frozen, n, gamma, 0.2, first_visit)
        backwards = mc_alpha_oracle(frozen, n, gamma, 0.2, first_visit, backwards=True)
        if not np.allclose(got, backwards, atol=1e-8):  # every-visit may legitimately visit an episode backwards
            check_close(got, forwards, what=f"mc_prediction, {name}, α = 0.2, 12 эпизодов, γ = {gamma:.3f}",
                        hint="V(s) ← V(s) + α·(G_t − V(s)) для каждого учтённого шага, эпизод за эпизодом.")
    check_that(episodes == frozen, what="mc_prediction не меняет эпизоды")


# ---- TD(0) -----------------------------------------------------------------------------------------


@graded("TD(0) на одном эпизоде: обновления онлайн по порядку, конечное состояние не бутстрапится")
def test_td0_hand(mc_td):
    """V0 = [0.5, 0.5, 0.5], α = 0.5, γ = 1; эпизод (0, +1, 1), (1, 0, 0), (0, +1, 2, конец):
        V(0) ← 0.5 + 0.5·(1 + 0.5 − 0.5) = 1.0
        V(1) ← 0.5 + 0.5·(0 + V(0) − 0.5) = 0.75        (уже новое V(0) = 1.0)
        V(0) ← 1.0 + 0.5·(1 + 0 − 1.0) = 1.0             (2 — конечное: его V0 = 0.5 не бутстрапится)
    """
    V0 = np.array([0.5, 0.5, 0.5])
    before = V0.copy()
    episode = [(0, 1.0, 1, False), (1, 0.0, 0, False), (0, 1.0, 2, True)]
    got = check_vector(mc_td.td0_prediction([episode], 3, 0.5, 1.0, V0=V0), 3, "td0_prediction")
    check_close(got, [1.0, 0.75, 0.5],
                what="td0_prediction: V0 = [0.5, 0.5, 0.5], α = 0.5, γ = 1, эпизод (0, +1, 1), (1, 0, 0), (0, +1, 2, конец)",
                hint="δ = r + γ·V(s')·(1 − terminated) − V(s); V(s) += α·δ сразу после каждого перехода.",
                mistakes={"у конечного перехода бутстрапится V(s') (нет маски terminated)": [1.25, 0.75, 0.5],
                          "в цели TD стоит V текущего состояния, а не следующего": [1.5, 0.5, 0.5],
                          "все δ посчитаны по старым V (не онлайн)": [1.25, 0.5, 0.5]})
    check_unchanged(before, V0, name="V0", function="td0_prediction")


@graded("TD(0): оборванный эпизод (terminated = False) бутстрапит V(s_next), законченный — нет")
def test_td0_truncated_bootstraps(mc_td):
    """V0 = [0, 2, 2], α = 0.5, γ = 0.9. Переход (0, 0, 1, terminated=False): V(0) = 0.5·(0 + 0.9·2) = 0.9.
    Тот же переход с terminated=True: V(0) = 0.5·0 = 0."""
    got = mc_td.td0_prediction([[(0, 0.0, 1, False)]], 3, 0.5, 0.9, V0=[0.0, 2.0, 2.0])
    check_close(got, [0.9, 2.0, 2.0], what="td0_prediction, последний переход оборван (terminated = False)",
                hint="конец списка переходов ещё не конец задачи: бутстрап отключает только terminated = True.",
                mistakes={"оборванный эпизод считается законченным": [0.0, 2.0, 2.0]})
    got = mc_td.td0_prediction([[(0, 0.0, 1, True)]], 3, 0.5, 0.9, V0=[0.0, 2.0, 2.0])
    check_close(got, [0.0, 2.0, 2.0], what="td0_prediction, переход в конечное состояние (terminated = True)",
                hint="у конечного состояния будущего нет: цель — просто r.",
                mistakes={"нет маски terminated: бутстрап из конечного состояния": [0.9, 2.0, 2.0]})


@graded("TD(0) на случайных эпизодах (часть оборвана), n_epochs = {n_epochs}, против прохода по плоскому батчу")
@pytest.mark.parametrize("n_epochs", [1, 3], ids=["epochs1", "epochs3"])
def test_td0_random(mc_td, n_epochs):
    rng = np.random.default_rng(1100 + n_epochs)
    n = 6
    episodes = random_episodes(rng, n, 10, truncate_some=True)
    frozen = copy.deepcopy(episodes)
    V0 = rng.normal(size=n)
    V0_before = V0.copy()
    alpha, gamma = 0.3, float(rng.uniform(0.6, 1.0))
    kwargs = {} if n_epochs == 1 else {"n_epochs": n_epochs}
    got = mc_td.td0_prediction(episodes, n, alpha, gamma, V0=V0, **kwargs)
    check_close(got, td0_oracle(frozen, n, alpha, gamma, V0, n_epochs),
                what=f"td0_prediction, 10 эпизодов, α = {alpha}, γ = {gamma:.3f}, n_epochs = {n_epochs}",
                hint="переходы по порядку, эпизод за эпизодом; n_epochs — столько раз пройти весь набор.",
                mistakes={"n_epochs проигнорирован": td0_oracle(frozen, n, alpha, gamma, V0, 1),
                          "V0 проигнорирован (старт с нулей)": td0_oracle(frozen, n, alpha, gamma, None, n_epochs),
                          "каждый эпизод проигран n_epochs раз подряд, а нужно n_epochs раз пройти весь набор по порядку":
                              td0_oracle([ep for ep in frozen for _ in range(n_epochs)], n, alpha, gamma, V0, 1)}
                if n_epochs > 1 else {"V0 проигнорирован (старт с нулей)": td0_oracle(frozen, n, alpha, gamma, None, 1)})
    check_unchanged(V0_before, V0, name="V0", function="td0_prediction")
    check_that(episodes == frozen, what="td0_prediction не меняет эпизоды")


@graded("Пакетный TD(0) (малый α, много эпох) сходится к оценке по модели из данных (certainty equivalence)")
def test_batch_td_certainty_equivalence(mc_td, envs):
    episodes = envs.random_walk_episodes(10, seed=50)
    expected = certainty_equivalence(episodes, 7, 1.0)
    got = mc_td.td0_prediction(episodes, 7, 0.01, 1.0, n_epochs=500)
    check_close(got, expected, atol=0.02, what="td0_prediction(10 эпизодов блуждания, α = 0.01, n_epochs = 500)",
                hint="при повторном проигрывании одного батча TD(0) сходится к ценностям модели, оценённой по данным "
                     "(частоты переходов и средние награды); проверьте, что n_epochs действительно повторяет проход.",
                mistakes={"n_epochs проигнорирован": td0_oracle(episodes, 7, 0.01, 1.0)})


# ---- the random walk ---------------------------------------------------------------------------

RW_EPISODES = 300
MC_BAND, MC_EVERY_BAND, MC_ALPHA_BAND, TD_BAND = 0.10, 0.12, 0.20, 0.13


@graded("Случайное блуждание, 300 эпизодов: RMS-ошибка MC < 0.10 (first-visit), < 0.12 (every-visit), < 0.20 (α = 0.05) (seed {seed})")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_walk_mc(mc_td, envs, seed):
    walk = envs.RandomWalk()
    true = walk.true_values()
    episodes = envs.random_walk_episodes(RW_EPISODES, seed=seed)
    for kwargs, band, name in [({}, MC_BAND, "first-visit"), ({"first_visit": False}, MC_EVERY_BAND, "every-visit"),
                               ({"alpha": 0.05}, MC_ALPHA_BAND, "first-visit, α = 0.05")]:
        V = check_vector(mc_td.mc_prediction(episodes, 7, 1.0, **kwargs), 7, "mc_prediction")
        err = rms_error(V, true)
        check_that(err < band, what=f"mc_prediction ({name}) на случайном блуждании: RMS-ошибка по состояниям A…E",
                   expected=f"< {band}", got=f"{err:.4f}; V = {fmt(V, 3)}",
                   hint="истинные ценности 1/6 … 5/6; отдача — сумма наград до конца эпизода (γ = 1).")


@graded("Случайное блуждание, 300 эпизодов: RMS-ошибка TD(0) (α = 0.05, V0 = 0.5 везде) < 0.13 (seed {seed})")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_walk_td(mc_td, envs, seed):
    true = envs.RandomWalk().true_values()
    episodes = envs.random_walk_episodes(RW_EPISODES, seed=seed)
    V = check_vector(mc_td.td0_prediction(episodes, 7, 0.05, 1.0, V0=np.full(7, 0.5)), 7, "td0_prediction")
    err = rms_error(V, true)
    check_that(err < TD_BAND, what="td0_prediction на случайном блуждании (V0 = 0.5 и в конечных состояниях)",
               expected=f"< {TD_BAND}", got=f"{err:.4f}; V = {fmt(V, 3)}",
               hint="у конечных состояний 0 и 6 стоит V0 = 0.5, но бутстрапить их нельзя: при terminated цель — просто r.")


@graded("Случайное блуждание: после 20 эпизодов TD(0) (α = 0.1) точнее Монте-Карло, среднее по 30 запускам")
def test_td_learns_faster_early(mc_td, envs):
    true = envs.RandomWalk().true_values()
    td_err, mc_err = [], []
    for run in range(30):
        episodes = envs.random_walk_episodes(20, seed=2000 + run)
        td_err.append(rms_error(mc_td.td0_prediction(episodes, 7, 0.1, 1.0, V0=np.full(7, 0.5)), true))
        mc_err.append(rms_error(mc_td.mc_prediction(episodes, 7, 1.0), true))
    td, mc = float(np.mean(td_err)), float(np.mean(mc_err))
    check_that(td < 0.09 and td < mc, what="средняя RMS-ошибка после 20 эпизодов: TD(0) α = 0.1 против MC (средние отдач)",
               expected="TD < 0.09 и TD < MC", got=f"TD {td:.4f}, MC {mc:.4f}",
               hint="TD(0) учится на каждом шаге, бутстрапя из соседей, и поэтому на коротких данных обычно точнее. "
                    "Проверьте цель r + γ·V(s') и маску конечных состояний.")
