"""Graded checks of the part `policy_gradient`: softmax, ∇ log π, the REINFORCE step, the bandit.

The lesson's worked numbers (0.550, 0.525, 0.512) and the expected output table of the bandit in
the policy-gradient overview (seed 001) are pinned; randomized cases compare against oracles written
differently: log π through log-sum-exp, its gradient by finite differences, the bandit as a separate loop.
"""
import numpy as np
import pytest

from grader.checks import as_array, check_close, check_float, check_pair, check_that, check_unchanged, graded

# ---- oracles -----------------------------------------------------------------------------------


def log_softmax_oracle(z):
    z = np.asarray(z, float)
    m = z.max()
    return z - (m + np.log(np.sum(np.exp(z - m))))  # log π = z − logsumexp(z)


def grad_log_pi_fd(z, a, h=1e-6):
    """∂ log π(a) / ∂z by central finite differences."""
    z = np.asarray(z, float)
    grad = np.zeros_like(z)
    for i in range(len(z)):
        up, down = z.copy(), z.copy()
        up[i] += h
        down[i] -= h
        grad[i] = (log_softmax_oracle(up)[a] - log_softmax_oracle(down)[a]) / (2 * h)
    return grad


def bandit_oracle(use_baseline, seed, steps=2000, lr=0.01):
    """The overview's protocol: one generator; per step choice(3, p=π), then normal(0, 1); b after the step."""
    rng = np.random.default_rng(seed)
    arms = np.array([10.0, 10.5, 9.5])
    logits, b, grads = np.zeros(3), 0.0, np.zeros((min(steps, 200), 3))
    for t in range(steps):
        probs = np.exp(logits) / np.exp(logits).sum()
        action = rng.choice(3, p=probs)
        reward = arms[action] + rng.normal(0, 1)
        score = (np.arange(3) == action) - probs
        g = (reward - b if use_baseline else reward) * score
        if t < 200:
            grads[t] = g
        logits = logits + lr * g
        b = b + 0.05 * (reward - b)
    return probs, float(((grads - grads.mean(axis=0)) ** 2).mean(axis=0).sum())


# ---- softmax and its gradient -------------------------------------------------------------------


@graded("softmax: пример урока z = [−0.1, 0.1] → π = [0.450, 0.550]; сумма 1")
def test_softmax_lesson(policy_gradient):
    got = policy_gradient.softmax([-0.1, 0.1])
    check_close(got, [1 / (1 + np.exp(0.2)), 1 / (1 + np.exp(-0.2))], what="softmax([−0.1, 0.1])",
                hint="π_a = exp(z_a) / Σ_b exp(z_b).")


@graded("softmax на случайных логитах против exp(log π) через log-sum-exp; списки, float32, батч [..., A]")
def test_softmax_random(policy_gradient):
    rng = np.random.default_rng(0)
    for n in (2, 3, 7):
        z = rng.normal(0, 3, size=n).astype(np.float32)
        before = z.copy()
        check_close(policy_gradient.softmax(z), np.exp(log_softmax_oracle(z)), atol=1e-6,
                    what=f"softmax от {n} логитов float32")
        check_unchanged(before, z, name="z", function="softmax")
        check_close(policy_gradient.softmax(z.tolist()), np.exp(log_softmax_oracle(z)), atol=1e-6,
                    what=f"softmax от списка Python из {n} логитов")
    batch = rng.normal(0, 2, size=(4, 5))
    expected = np.stack([np.exp(log_softmax_oracle(row)) for row in batch])
    check_close(policy_gradient.softmax(batch), expected, atol=1e-9, what="softmax батча формы (4, 5) по последней оси",
                hint="максимум и сумма — по последней оси: z.max(axis=-1, keepdims=True), e.sum(axis=-1, keepdims=True).",
                mistakes={"нормировка по всему массиву, а не по каждой строке": np.exp(batch) / np.exp(batch).sum(),
                          "нормировка по первой оси (по столбцам), а не по последней":
                              np.exp(batch) / np.exp(batch).sum(axis=0, keepdims=True)})


@graded("softmax численно устойчив: логиты ±1000 без переполнения и NaN")
def test_softmax_large_logits(policy_gradient):
    cases = [([1000.0, -1000.0, 0.0], [1.0, 0.0, 0.0]),
             ([1000.0, 1000.0], [0.5, 0.5]),
             ([-1000.0, -1000.0, -999.0], [1 / (2 + np.e), 1 / (2 + np.e), np.e / (2 + np.e)])]
    for z, expected in cases:
        with np.errstate(all="ignore"):
            got = policy_gradient.softmax(np.array(z))
        check_close(got, expected, atol=1e-9, what=f"softmax({z})",
                    hint="вычтите максимум перед exp: softmax(z) = softmax(z − max z). Без сдвига exp(1000) = inf, "
                         "inf/inf = NaN, а exp(−1000) = 0 даёт 0/0.")


@graded("∇ log softmax: пример урока [0, 1] − [0.5, 0.5] = [−0.5, 0.5]")
def test_grad_log_softmax_lesson(policy_gradient):
    check_close(policy_gradient.grad_log_softmax(np.zeros(2), 1), [-0.5, 0.5],
                what="grad_log_softmax(z = [0, 0], a = 1 «вправо»)", hint="one-hot выбранного действия минус вероятности.",
                mistakes={"знак перевёрнут: π − one-hot": [0.5, -0.5], "вернули one-hot без вычитания π": [0.0, 1.0],
                          "вернули π": [0.5, 0.5]})


@graded("∇ log softmax на случайных логитах против конечных разностей log π (seed {seed})")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_grad_log_softmax_random(policy_gradient, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    z = rng.normal(0, 2, size=n)
    a = int(rng.integers(n))
    before = z.copy()
    got = policy_gradient.grad_log_softmax(z, a)
    pi = np.exp(log_softmax_oracle(z))
    check_close(got, grad_log_pi_fd(z, a), atol=1e-6, what=f"grad_log_softmax для {n} действий, a = {a}",
                hint="∂ log π(a) / ∂z_b = [a = b] − π(b).",
                mistakes={"знак перевёрнут: π − one-hot": pi - np.eye(n)[a], "вернули π": pi})
    check_unchanged(before, z, name="z", function="grad_log_softmax")


# ---- the REINFORCE step: the lesson's numbers ---------------------------------------------------

LEFT, RIGHT = 0, 1


def _step_mistakes(a, G, lr, b=0.0):
    grad = np.eye(2)[a] - 0.5
    return {"градиентный спуск вместо подъёма (z − α·…)": -lr * (G - b) * grad,
            "baseline прибавлен, а не вычтен (G + b)": lr * (G + b) * grad,
            "baseline не учтён": lr * G * grad,
            "шаг без α": (G - b) * grad}


@graded("Пример урока: z = [0, 0], «вправо», R = 2, α = 0.1 → z = [−0.1, 0.1], π(вправо) = 0.550")
def test_reinforce_step_right(policy_gradient):
    z = np.zeros(2)
    z_new = policy_gradient.reinforce_step(z, RIGHT, 2.0, 0.1)
    check_close(z_new, [-0.1, 0.1], what="reinforce_step(z = [0, 0], a = «вправо», G = 2, α = 0.1)",
                hint="z + α·(G − b)·(e_a − π): подъём по градиенту, с плюсом.", mistakes=_step_mistakes(RIGHT, 2.0, 0.1))
    check_unchanged(np.zeros(2), z, name="z", function="reinforce_step")
    pi = as_array(policy_gradient.softmax(z_new), "softmax(z_new)")
    check_float(round(float(pi[RIGHT]), 3), 0.550, what="π(вправо) после шага, округлённая до 0.001")


@graded("Пример урока: «влево» с R = 1 → z = [0.05, −0.05], π(влево) = 0.525 (хотя это худшее действие)")
def test_reinforce_step_left(policy_gradient):
    z_new = policy_gradient.reinforce_step([0.0, 0.0], LEFT, 1.0, 0.1)
    check_close(z_new, [0.05, -0.05], what="reinforce_step(z = [0, 0], a = «влево», G = 1, α = 0.1)",
                mistakes=_step_mistakes(LEFT, 1.0, 0.1))
    pi = as_array(policy_gradient.softmax(z_new), "softmax(z_new)")
    check_float(round(float(pi[LEFT]), 3), 0.525, what="π(влево) после шага, округлённая до 0.001")


@graded("Пример урока с baseline b = 1.5: «вправо» (G = 2) и «влево» (G = 1) оба дают z = [−0.025, 0.025], π(вправо) = 0.512")
@pytest.mark.parametrize("action,G", [(RIGHT, 2.0), (LEFT, 1.0)], ids=["right_G2", "left_G1"])
def test_reinforce_step_baseline(policy_gradient, action, G):
    z_new = policy_gradient.reinforce_step(np.zeros(2), action, G, 0.1, baseline=1.5)
    check_close(z_new, [-0.025, 0.025],
                what=f"reinforce_step(z = [0, 0], a = «{'вправо' if action == RIGHT else 'влево'}», G = {G:g}, α = 0.1, b = 1.5)",
                hint="вес шага — G − b: у «вправо» +0.5, у «влево» −0.5.", mistakes=_step_mistakes(action, G, 0.1, 1.5))
    pi = as_array(policy_gradient.softmax(z_new), "softmax(z_new)")
    check_float(round(float(pi[RIGHT]), 3), 0.512, what="π(вправо) после шага, округлённая до 0.001")


@graded("reinforce_step на случайных логитах: z + α·(G − b)·∇ log π(a) по конечным разностям (seed {seed})")
@pytest.mark.parametrize("seed", [4, 5])
def test_reinforce_step_random(policy_gradient, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    z = rng.normal(size=n).astype(np.float32)
    a, G, lr, b = int(rng.integers(n)), float(rng.normal(3, 2)), float(rng.uniform(0.01, 0.5)), float(rng.normal())
    before = z.copy()
    got = policy_gradient.reinforce_step(z, a, G, lr, baseline=b)
    expected = z.astype(float) + lr * (G - b) * grad_log_pi_fd(z, a)
    check_close(got, expected, atol=1e-5, what=f"reinforce_step: {n} действий, a = {a}, G = {G:.3f}, α = {lr:.3f}, b = {b:.3f}",
                mistakes={"градиентный спуск вместо подъёма": z - lr * (G - b) * grad_log_pi_fd(z, a),
                          "baseline прибавлен, а не вычтен": z + lr * (G + b) * grad_log_pi_fd(z, a)})
    check_unchanged(before, z, name="z", function="reinforce_step")


# ---- the three-armed bandit ---------------------------------------------------------------------

TABLE = [  # (use_baseline, seed, π rounded to 0.01, variance rounded to 0.1): the overview's expected output
    (False, 0, [0.04, 0.95, 0.01], 61.7),
    (False, 1, [0.97, 0.01, 0.01], 50.6),
    (False, 2, [0.81, 0.15, 0.04], 64.1),
    (True, 0, [0.04, 0.93, 0.03], 4.3),
    (True, 1, [0.06, 0.91, 0.03], 4.1),
    (True, 2, [0.05, 0.93, 0.02], 4.0),
]
PI_AFTER_LAST_UPDATE = {(False, 2): [0.82, 0.14, 0.04]}  # the only row where it shows after rounding
VAR_DDOF1 = {(False, 0): 62.0, (False, 1): 50.8, (False, 2): 64.5, (True, 2): 4.1}


@graded("Трёхрукий бандит, таблица из обзора: baseline={use_baseline}, seed={seed} → π={pi}, дисперсия={var}")
@pytest.mark.parametrize("use_baseline,seed,pi,var", TABLE, ids=[f"baseline{b}_seed{s}" for b, s, _, _ in TABLE])
def test_bandit_table(policy_gradient, use_baseline, seed, pi, var):
    got_pi, got_var = check_pair(policy_gradient.reinforce_bandit(use_baseline, seed), "reinforce_bandit",
                                 names=("pi", "grad_var"))
    got_pi = as_array(got_pi, "pi из reinforce_bandit", ndim=1)
    check_that(got_pi.shape == (3,) and abs(got_pi.sum() - 1) < 1e-6, what="pi — распределение над тремя рычагами",
               expected="массив [3] с суммой 1", got=f"форма {got_pi.shape}, сумма {got_pi.sum():.4f}")
    protocol = ("Протокол случайности из docstring: один rng = default_rng(seed); на шаге сначала rng.choice(3, p=π), "
                "потом rng.normal(0, 1); b обновляется после шага с темпом 0.05; pi — политика ДО последнего обновления.")
    check_close(np.round(got_pi, 2), pi, atol=1e-9, rtol=0,
                what=f"π после 2000 шагов (округлено до 0.01), baseline={use_baseline}, seed={seed}; без округления: "
                     + np.array2string(got_pi, precision=4),
                hint=protocol,
                mistakes={"вернули π после последнего обновления θ, а нужна политика, по которой выбрано "
                          "последнее действие": PI_AFTER_LAST_UPDATE.get((use_baseline, seed), [np.nan] * 3)})
    check_float(round(float(got_var), 1), var, atol=1e-9,
                what=f"дисперсия оценки градиента на первых 200 шагах (округлено до 0.1), baseline={use_baseline}, "
                     f"seed={seed}; без округления: {float(got_var):.4f}",
                hint="np.var(g[:200], axis=0) — по каждому рычагу, ddof = 0, — и сумма по трём рычагам. " + protocol,
                mistakes={"дисперсия с ddof = 1": VAR_DDOF1.get((use_baseline, seed), np.nan)})


@graded("Бандит на других seed против независимой реализации того же протокола (seed {seed})")
@pytest.mark.parametrize("seed", [5, 6])
def test_bandit_oracle(policy_gradient, seed):
    for use_baseline in (False, True):
        steps, lr = 600, 0.02
        pi, var = check_pair(policy_gradient.reinforce_bandit(use_baseline, seed, steps=steps, lr=lr), "reinforce_bandit",
                             names=("pi", "grad_var"))
        exp_pi, exp_var = bandit_oracle(use_baseline, seed, steps=steps, lr=lr)
        check_close(pi, exp_pi, atol=1e-6, what=f"π: baseline={use_baseline}, seed={seed}, steps={steps}, lr={lr}",
                    hint="steps и lr передаются аргументами; протокол случайности — как в docstring.")
        check_float(var, exp_var, rtol=1e-6, what=f"дисперсия градиента: baseline={use_baseline}, seed={seed}")


@graded("Baseline снижает дисперсию градиента в начале обучения на порядок (8 seed, в среднем ≥ 10 раз)")
def test_bandit_variance_reduction(policy_gradient):
    without, with_b = [], []
    for seed in range(10, 18):
        without.append(float(policy_gradient.reinforce_bandit(False, seed, steps=200)[1]))
        with_b.append(float(policy_gradient.reinforce_bandit(True, seed, steps=200)[1]))
    ratio = np.mean(without) / np.mean(with_b)
    check_that(ratio >= 10, what="средняя дисперсия без baseline / с baseline, seed 10–17, первые 200 шагов",
               expected="не меньше 10 (в обзоре — примерно 15)",
               got=f"{ratio:.1f} (без baseline {np.mean(without):.1f}, с baseline {np.mean(with_b):.1f})",
               hint="вес с baseline — r − b, где b — бегущее среднее награды (b ← b + 0.05·(r − b)), вычитается.")


@graded("С baseline REINFORCE находит лучший рычаг: π(рычаг 2) > 0.7 на каждом из 8 seed")
def test_bandit_baseline_finds_best_arm(policy_gradient):
    for seed in range(10, 18):
        pi, _ = check_pair(policy_gradient.reinforce_bandit(True, seed), "reinforce_bandit", names=("pi", "grad_var"))
        pi = as_array(pi, "pi")
        check_that(pi[1] > 0.7, what=f"π после 2000 шагов с baseline, seed = {seed}",
                   expected="вероятность лучшего (второго, a = 1) рычага больше 0.7", got=np.array2string(pi, precision=3),
                   hint="с baseline лучший рычаг получает положительный вес r − b, остальные — отрицательный; "
                        "проверьте знак шага (подъём) и что b вычитается.")
