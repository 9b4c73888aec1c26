"""The answer key of the part `ppo` (instructor only: the student's copy holds none of it; grader.grading.key).

The oracles are written differently from the reference (GAE as the explicit sum Σ(γλ)^l δ_{t+l} and as the
λ-mixture of n-step estimates, the clip as Spinning Up's g(ε, A) form, episode boundaries by splitting the batch
into episodes), so that a check does not merely compare the reference with itself. Every function returns data.
"""
import numpy as np

# ---- helpers ----------------------------------------------------------------------------------


def distinct(mistakes, atol=1e-6):
    """Only the mistakes a check can tell apart: two that give the same answer here are both left unnamed."""
    items = [(name, np.asarray(value, dtype=float)) for name, value in mistakes.items()]
    return {name: value for name, value in items
            if not any(other is not value and other.shape == value.shape
                       and np.allclose(other, value, atol=atol, rtol=atol)
                       for _, other in items)}


# ---- TD errors ----------------------------------------------------------------------------------


def deltas_oracle(rewards, values, last_value, gamma):
    r, v = np.asarray(rewards, float), np.asarray(values, float)
    return np.array([r[t] + gamma * (v[t + 1] if t + 1 < len(v) else last_value) - v[t] for t in range(len(r))])


def td_mistakes(rewards, values, last_value, gamma):
    """What typical wrong td_errors return for these arguments."""
    r, v = np.asarray(rewards, float), np.asarray(values, float)
    nxt = np.append(v[1:], last_value)
    return {"γ не умножен на V(s_{t+1})": r + nxt - v,
            "знак перевёрнут: V(s_t) − r_t − γV(s_{t+1})": v - r - gamma * nxt,
            "следующая ценность взята со сдвигом не в ту сторону (V(s_{t−1}) вместо V(s_{t+1}))":
                r + gamma * np.append(last_value, v[:-1]) - v,
            "last_value проигнорирован: после последнего шага всегда 0": r + gamma * np.append(v[1:], 0.0) - v}


def n_step_advantage(rewards, values, last_value, gamma, t, n):
    """Â_t^(n) = r_t + … + γ^{n−1} r_{t+n−1} + γ^n V(s_{t+n}) − V(s_t); past the end: the full return."""
    r, v = np.asarray(rewards, float), np.asarray(values, float)
    T = len(r)
    steps = min(n, T - t)
    ret = sum(gamma ** k * r[t + k] for k in range(steps))
    bootstrap = v[t + steps] if t + steps < T else last_value
    return float(ret + gamma ** steps * bootstrap - v[t])


def two_step_mistakes(rewards, values, last_value, gamma):
    """δ_0 + γ·δ_1 as each typical wrong td_errors gives it."""
    return {name: float(wrong[0] + gamma * wrong[1])
            for name, wrong in td_mistakes(rewards, values, last_value, gamma).items()}


# ---- GAE ------------------------------------------------------------------------------------------


def gae_explicit_sum(delta, gamma, lam):
    """Â_t = Σ_l (γλ)^l δ_{t+l}, as one matrix product."""
    T = len(delta)
    power = np.subtract.outer(np.arange(T), np.arange(T)).T  # power[t, k] = k − t
    weights = np.where(power >= 0, (gamma * lam) ** np.clip(power, 0, None), 0.0)
    return weights @ np.asarray(delta, float)


def gae_advantages(rewards, values, last_value, gamma, lam):
    """The GAE advantages of one trajectory, as the explicit sum over its TD errors."""
    return gae_explicit_sum(deltas_oracle(rewards, values, last_value, gamma), gamma, lam)


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


def gae_returns(rewards, values, last_value, gamma, lam):
    """(advantages, returns, mistakes of the returns when the advantages are right, the returns each typical wrong
    GAE gives): what a returns check compares with and names."""
    values = np.asarray(values, float)
    delta = deltas_oracle(rewards, values, last_value, gamma)
    right = gae_explicit_sum(delta, gamma, lam)
    inherited = {name: wrong + values for name, wrong in gae_mistakes(delta, gamma, lam).items()}
    return right, right + values, returns_mistakes(right, values), inherited


def returns_mistakes(advantages, values):
    """What the typical wrong returns are when the advantages are right (gae and gae_with_boundaries alike)."""
    advantages, values = np.asarray(advantages, float), np.asarray(values, float)
    return {"вернули advantages вместо returns": advantages, "returns = advantages − values": advantages - values}


# ---- the clipped objective -------------------------------------------------------------------------


def clip_objective_oracle(ratio, adv, eps):
    """Spinning Up's form: min(ρA, g(ε, A)), g = (1+ε)A for A ≥ 0 and (1−ε)A for A < 0."""
    ratio, adv = np.asarray(ratio, float), np.asarray(adv, float)
    g = np.where(adv >= 0, (1 + eps) * adv, (1 - eps) * adv)
    return float(np.mean(np.minimum(ratio * adv, g)))


def clip_objective(logp_new, logp_old, adv, eps=0.2):
    """L^CLIP of a batch given by its log-probabilities."""
    return clip_objective_oracle(np.exp(np.asarray(logp_new, float) - np.asarray(logp_old, float)), adv, eps)


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
           # min(ρ, clip(ρ))·Â = min(ρÂ, clip(ρ)Â) for Â ≥ 0 and max(ρÂ, clip(ρ)Â) for Â < 0: one answer on every
           # input, two ways to write it, so the name says both
           "min взят от самих ρ и clip(ρ) (или, что то же самое, min при Â ≥ 0 и max при Â < 0), а нужен min от "
           "произведений при любом знаке Â: min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â)": np.mean(np.minimum(ratio, clip) * adv)}
    if eps != 0.2:
        out["eps не используется: посчитано при ε = 0.2"] = np.mean(np.minimum(
            ratio * adv, np.clip(ratio, 0.8, 1.2) * adv))
    out = {name: float(value) for name, value in out.items()}
    return distinct(out) if unique else out


# ---- advantage normalization -------------------------------------------------------------------------


def normalized(adv):
    """(Â − mean) / (std + 1e−8) over the whole batch, np.std's ddof = 0."""
    adv = np.asarray(adv, float)
    return (adv - adv.mean()) / (adv.std() + 1e-8)


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


# ---- the full loss -----------------------------------------------------------------------------------


def loss(logp_new, logp_old, adv, values_pred, returns, entropy, eps=0.2, c_v=0.5, c_e=0.01):
    return float(-clip_objective(logp_new, logp_old, adv, eps)
                 + c_v * np.mean((np.asarray(values_pred, float) - np.asarray(returns, float)) ** 2)
                 - c_e * np.mean(np.asarray(entropy, float)))


def loss_mistakes(logp_new, logp_old, adv, values_pred, returns, entropy, eps=0.2, c_v=0.5, c_e=0.01):
    """What typical wrong PPO losses return for these arguments."""
    ratio = np.exp(np.asarray(logp_new, float) - np.asarray(logp_old, float))
    adv, entropy = np.asarray(adv, float), np.asarray(entropy, float)
    err = np.asarray(values_pred, float) - np.asarray(returns, float)
    objective = clip_objective_oracle(ratio, adv, eps)
    value, bonus = np.mean(err ** 2), np.mean(entropy)
    normalized_adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    out = {"цель L^CLIP взята с плюсом": objective + c_v * value - c_e * bonus,
           "энтропийный бонус прибавлен, а не вычтен": -objective + c_v * value + c_e * bonus,
           "ошибка критика без квадрата": -objective + c_v * np.mean(err) - c_e * bonus,
           "ошибка критика по модулю, а нужен квадрат": -objective + c_v * np.mean(np.abs(err)) - c_e * bonus,
           "сумма квадратов вместо среднего": -objective + c_v * np.sum(err ** 2) - c_e * bonus,
           "c_v и c_e перепутаны": -objective + c_e * value - c_v * bonus,
           "ppo_loss сам нормирует преимущества (их нормируют до вызова)":
               -clip_objective_oracle(ratio, normalized_adv, eps) + c_v * value - c_e * bonus}
    if (eps, c_v, c_e) != (0.2, 0.5, 0.01):
        if eps != 0.2:
            out["eps не передан в ppo_clip_objective: цель посчитана при ε = 0.2"] = (
                -clip_objective_oracle(ratio, adv, 0.2) + c_v * value - c_e * bonus)
        if c_v != 0.5:
            out["c_v не используется: вес критика 0.5 по умолчанию"] = -objective + 0.5 * value - c_e * bonus
        if c_e != 0.01:
            out["c_e не используется: вес энтропии 0.01 по умолчанию"] = -objective + c_v * value - 0.01 * bonus
    return distinct({name: float(value) for name, value in out.items()})


# ---- GAE over a batch with episode boundaries -----------------------------------------------------


def boundary_oracle(rewards, values, next_values, terminated, truncated, gamma, lam):
    """Split the rollout into episodes, and sum (γλ)^l δ within each one (one environment: shape [T])."""
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


def boundary_gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    """(advantages, returns) of a batch [T] or [T, N]: each column (environment) split into its episodes."""
    r, v, vn = (np.asarray(x, float) for x in (rewards, values, next_values))
    term, trunc = np.asarray(terminated, bool), np.asarray(truncated, bool)
    if r.ndim == 1:
        adv = boundary_oracle(r, v, vn, term, trunc, gamma, lam)
    else:
        adv = np.stack([boundary_oracle(r[:, n], v[:, n], vn[:, n], term[:, n], trunc[:, n], gamma, lam)
                        for n in range(r.shape[1])], axis=1)
    return adv, adv + v


VALUES_SHIFTED = ("V(s_{t+1}) взята из values[t + 1], а не из next_values[t]: после оборванного шага values[t + 1] — "
                  "ценность первого наблюдения нового эпизода, "
                  "а бутстрапить нужно то наблюдение, на котором эпизод оборван")

# the names of the same mistakes in the hand-made check and in the random one (NAMED_BY of the mutants)
BOUNDARY_NAMES = {
    "hand_made": {
        "swapped": "terminated и truncated перепутаны",
        "no_cut": "рекурсия не обрывается на конце эпизода",
        "truncated_as_terminal": "оборванный эпизод не бутстрапит V(s_{t+1})",
        "terminal_bootstraps": "конечное состояние бутстрапит V(s_{t+1})",
        "flags_shifted": "флаги взяты со следующего шага (done_{t+1}, как dones в CleanRL)",
        "values_shifted": VALUES_SHIFTED,
    },
    "random": {
        "cut_on_terminated_only": "рекурсия обрывается только на terminated, а через truncated идёт дальше",
        "swapped": "terminated и truncated перепутаны",
        "terminal_bootstraps": "конечное состояние (terminated) бутстрапит V(s_{t+1})",
        "truncated_as_terminal": "оборванный эпизод (truncated) не бутстрапит V(s_{t+1}): его обрыв принят за "
                                 "конечное состояние",
        "no_cut": "рекурсия не обрывается на концах эпизодов",
        "flags_shifted": "флаги взяты со следующего шага (done_{t+1}, как dones в CleanRL, где флаг стоит на первом "
                         "шаге эпизода)",
        "values_shifted": VALUES_SHIFTED,
    },
}


BOUNDARY_NAMES["both"] = dict(BOUNDARY_NAMES["random"], both_bootstraps=(
    "на шаге с обоими флагами (terminated и truncated) δ бутстрапит V(s_{t+1}): truncated проверен раньше terminated, "
    "а у конечного состояния будущего нет, обрыв лимитом его не возвращает"))


def boundary_returns_mistakes(rewards, values, next_values, terminated, truncated, gamma, lam):
    """What typical wrong returns of gae_with_boundaries are, [T] or [T, N], when its advantages are right (its
    returns checks come after its advantages pass)."""
    advantages, _ = boundary_gae(rewards, values, next_values, terminated, truncated, gamma, lam)
    return returns_mistakes(advantages, values)


def boundary_mistakes(rewards, values, next_values, terminated, truncated, gamma, lam, names="random"):
    """What typical wrong gae_with_boundaries return for one environment [T] (advantages), named as the check
    ``names`` ("hand_made", "random", or "both": a batch with steps flagged both terminated and truncated) names
    them."""
    r, v, vn = (np.asarray(x, float) for x in (rewards, values, next_values))
    term, trunc = np.asarray(terminated, bool), np.asarray(truncated, bool)
    ends, never = term | trunc, np.zeros(len(r), dtype=bool)
    shifted = np.concatenate([v[1:], vn[-1:]])
    wrong = {
        "cut_on_terminated_only": boundary_oracle(r, v, vn, term, never, gamma, lam),
        "swapped": boundary_oracle(r, v, vn, trunc, term, gamma, lam),
        "terminal_bootstraps": boundary_oracle(r, v, vn, never, ends, gamma, lam),
        "truncated_as_terminal": boundary_oracle(r, v, vn, ends, trunc, gamma, lam),
        "no_cut": gae_explicit_sum(r + gamma * np.where(term, 0.0, vn) - v, gamma, lam),
        "flags_shifted": boundary_oracle(r, v, vn, np.append(term[1:], False), np.append(trunc[1:], False),
                                         gamma, lam),
        "values_shifted": boundary_oracle(r, v, shifted, term, trunc, gamma, lam),
        "both_bootstraps": boundary_oracle(r, v, vn, term & ~trunc, trunc, gamma, lam),
    }
    return {name: wrong[what] for what, name in BOUNDARY_NAMES[names].items()}


def boundary_parallel_mistakes(rewards, values, next_values, terminated, truncated, gamma, lam):
    """What a gae_with_boundaries that flattens the batch [T, N] into one sequence returns."""
    r = np.asarray(rewards, float)
    flat = boundary_oracle(r.ravel(), np.asarray(values, float).ravel(), np.asarray(next_values, float).ravel(),
                           np.asarray(terminated, bool).ravel(), np.asarray(truncated, bool).ravel(), gamma,
                           lam).reshape(r.shape)
    return {"батч [T, N] развёрнут в одну последовательность (ravel/flatten): среды смешаны, а рекурсия должна идти "
            "по оси времени 0 для каждого столбца отдельно": flat}


# ---- bonus: the clipped value loss -----------------------------------------------------------------


def clipped_value_loss(values_pred, values_old, returns, eps=0.2):
    """0.5·mean(max((V − R̂)², (V_clip − R̂)²)), V_clip written as a case split rather than with clip."""
    v, v_old, ret = (np.asarray(x, float) for x in (values_pred, values_old, returns))
    v_clip = np.where(v - v_old > eps, v_old + eps, np.where(v - v_old < -eps, v_old - eps, v))
    return float(0.5 * np.mean(np.maximum((v - ret) ** 2, (v_clip - ret) ** 2)))


def clipped_value_mistakes(values_pred, values_old, returns, eps=0.2):
    """What typical wrong clipped value losses return for these arguments."""
    v, v_old, ret = (np.asarray(x, float) for x in (values_pred, values_old, returns))
    v_clip = np.where(v - v_old > eps, v_old + eps, np.where(v - v_old < -eps, v_old - eps, v))
    unclipped, clipped = (v - ret) ** 2, (v_clip - ret) ** 2
    out = {"min вместо max": 0.5 * np.mean(np.minimum(unclipped, clipped)),
           "без множителя 0.5": np.mean(np.maximum(unclipped, clipped))}
    if eps != 0.2:
        at_02 = np.where(v - v_old > 0.2, v_old + 0.2, np.where(v - v_old < -0.2, v_old - 0.2, v))
        out["eps не используется: посчитано при ε = 0.2"] = 0.5 * np.mean(np.maximum(unclipped, (at_02 - ret) ** 2))
    return distinct({name: float(value) for name, value in out.items()})
