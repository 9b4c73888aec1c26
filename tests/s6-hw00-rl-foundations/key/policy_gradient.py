"""The answer key of the part `policy_gradient` (instructor only: the student's copy holds none of it;
grader.grading.key).

The oracles are written differently from the reference: log π through log-sum-exp, its gradient by finite
differences, the bandit as a separate loop; the typical mistakes are replayed on the check's own inputs.
"""
import numpy as np

# ---- softmax and its gradient -------------------------------------------------------------------


def log_softmax_oracle(z):
    """log π = z − logsumexp(z) along the last axis."""
    z = np.asarray(z, float)
    m = z.max(axis=-1, keepdims=True)
    return z - (m + np.log(np.sum(np.exp(z - m), axis=-1, keepdims=True)))


def softmax_oracle(z):
    """π = exp(log π), row by row along the last axis."""
    return np.exp(log_softmax_oracle(z))


def softmax_batch_mistakes(batch):
    """What a softmax normalized over the wrong axes returns for a batch [..., A]."""
    batch = np.asarray(batch, float)
    return {"нормировка по всему массиву, а не по каждой строке": np.exp(batch) / np.exp(batch).sum(),
            "нормировка по первой оси (по столбцам), а не по последней":
                np.exp(batch) / np.exp(batch).sum(axis=0, keepdims=True)}


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


def grad_mistakes(z, a):
    """What typical wrong grad_log_softmax return for these logits and action."""
    pi = softmax_oracle(z)
    n = len(pi)
    return {"знак перевёрнут: π − one-hot": pi - np.eye(n)[a], "вернули π": pi,
            "вернули one-hot без вычитания π": np.eye(n)[a]}


# ---- the REINFORCE step -------------------------------------------------------------------------


def reinforce_step_oracle(z, a, G, lr, b=0.0):
    """z + α·(G − b)·∇ log π(a), the gradient by finite differences (in float64)."""
    return np.asarray(z, float) + lr * (G - b) * grad_log_pi_fd(z, a)


def step_mistakes(z, a, G, lr, b=0.0):
    """What typical wrong reinforce_step return for these arguments."""
    z64, grad = np.asarray(z, float), grad_log_pi_fd(z, a)
    return {"градиентный спуск вместо подъёма": z64 - lr * (G - b) * grad,
            "baseline прибавлен, а не вычтен": z64 + lr * (G + b) * grad,
            "baseline не учтён": z64 + lr * G * grad,
            "шаг без α": z64 + (G - b) * grad}


def lesson_step_mistakes(a, G, lr, b=0.0):
    """The typical wrong steps from the lesson's z = [0, 0] with two actions (names as the lesson's checks show)."""
    grad = np.eye(2)[a] - 0.5
    return {"градиентный спуск вместо подъёма (z − α·…)": -lr * (G - b) * grad,
            "baseline прибавлен, а не вычтен (G + b)": lr * (G + b) * grad,
            "baseline не учтён": lr * G * grad,
            "шаг без α": (G - b) * grad}


# ---- the three-armed bandit ---------------------------------------------------------------------


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


def _bandit_trajectory(use_baseline, seed, steps=2000, lr=0.01, mistake=None):
    """The overview's protocol, or one typical deviation from it: (π before the last update, π after it, all g_t)."""
    rng = np.random.default_rng(seed)
    arms = np.array([10.0, 10.5, 9.5])
    logits, b, total, grads = np.zeros(3), 0.0, 0.0, []
    weighted = {"always_baseline": True, "never_baseline": False}.get(mistake, use_baseline)
    for t in range(steps):
        probs = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
        if mistake == "noise_first":
            noise = rng.normal(0, 1)
            action = rng.choice(3, p=probs)
        else:
            action = rng.choice(3, p=probs)
            noise = rng.normal(0, 1)
        reward = arms[action] + noise
        if mistake == "baseline_first":
            b = b + 0.05 * (reward - b)
        g = (reward - b if weighted else reward) * ((np.arange(3) == action) - probs)
        grads.append(g)
        logits = logits - lr * g if mistake == "descent" else logits + lr * g
        if mistake == "mean_so_far":
            total += reward
            b = total / (t + 1)
        elif mistake != "baseline_first":
            b = b + 0.05 * (reward - b)
    after = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    return probs, after, np.array(grads)


def _var(grads, **kwargs):
    return float(np.var(grads, axis=0, **kwargs).sum())


BANDIT_MISTAKES = {  # name for the student: (the trajectory's mistake, how π and the variance are read from it)
    "baseline b обновлён до того, как посчитан вес r − b (b ← b + 0.05·(r − b) стоит раньше w = r − b): вес шага t "
    "должен видеть старое b, а обновление b — последняя строка шага": ("baseline_first", "before", "early"),
    "шум награды взят до выбора действия: порядок вызовов rng — как в docstring, сначала действие a ~ π, потом шум "
    "награды N(0, 1)":
        ("noise_first", "before", "early"),
    "baseline — простое среднее всех наград, а нужно бегущее среднее b ← b + 0.05·(r − b)":
        ("mean_so_far", "before", "early"),
    "use_baseline проигнорирован: baseline вычитается и без него": ("always_baseline", "before", "early"),
    "use_baseline проигнорирован: baseline не вычитается и с ним": ("never_baseline", "before", "early"),
    "шаг вниз по градиенту (θ − α·g_t), а нужен подъём θ + α·g_t": ("descent", "before", "early"),
    "вернули π после последнего обновления θ, а нужна политика, по которой выбрано последнее действие":
        (None, "after", "early"),
    "дисперсия с ddof = 1, а нужна np.var по умолчанию (ddof = 0)": (None, "before", "ddof1"),
    "дисперсия по всем шагам запуска, а нужна по первым 200": (None, "before", "all"),
    "np.var без axis: одна дисперсия всех 600 чисел, а нужна дисперсия каждого рычага (axis=0) и их сумма":
        (None, "before", "no_axis"),
    "дисперсии рычагов усреднены, а нужна их сумма": (None, "before", "mean"),
}


def bandit_mistakes(use_baseline, seed, steps, lr, extra=()):
    """What typical wrong reinforce_bandit return for these arguments: {name: (π, variance)}, in the order a
    diagnosis tries them. extra: more (name, steps, lr) run with the right protocol (a steps or lr not passed on)."""
    runs, out = {}, {}
    for name, (mistake, pi_at, var_of) in BANDIT_MISTAKES.items():
        if mistake not in runs:
            runs[mistake] = _bandit_trajectory(use_baseline, seed, steps, lr, mistake)
        before, after, grads = runs[mistake]
        early = grads[:200]
        var = {"early": _var(early), "ddof1": _var(early, ddof=1), "all": _var(grads),
               "no_axis": float(np.var(early)), "mean": float(np.var(early, axis=0).mean())}[var_of]
        out[name] = (after if pi_at == "after" else before, var)
    for name, other_steps, other_lr in extra:
        pi, _, grads = _bandit_trajectory(use_baseline, seed, other_steps, other_lr)
        out[name] = (pi, _var(grads[:200]))
    return out
