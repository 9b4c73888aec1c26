"""Часть ppo: TD-ошибки, GAE и loss PPO — практика урока 6.0.3.

Обозначения урока: δ_t — TD-ошибка, Â_t — оценка преимущества, ρ_t = π_θ / π_old — отношение
вероятностей, γ — дисконт, λ — параметр GAE, ε — ширина клиппинга, c_v и c_e — веса критика
и энтропии. Все функции принимают списки или массивы NumPy (float32 или float64) и не меняют
свои аргументы.
"""
import numpy as np


def td_errors(rewards, values, last_value, gamma):
    """TD-ошибки одной траектории: δ_t = r_t + γ·V(s_{t+1}) − V(s_t).

    Аргументы:
        rewards    — [T], награды r_0 … r_{T-1};
        values     — [T], оценки критика V(s_0) … V(s_{T-1});
        last_value — число, V(s_T) после последнего шага (0, если эпизод закончился);
        gamma      — дисконт γ.
    Возвращает np.ndarray формы [T].

    Подсказка: «следующие» ценности — это values[1:] и last_value.
    Робот-курьер из урока: r = [1, 0, 2], V = [2, 1.5, 1], last_value = 0, γ = 0.9 → δ = [0.35, −0.6, 1.0].
    """
    # BEGIN SOLUTION
    r = np.asarray(rewards, dtype=float)
    v = np.asarray(values, dtype=float)
    v_next = np.append(v[1:], float(last_value))  # V(s_{t+1}); после последнего шага — last_value
    return r + gamma * v_next - v
    # END SOLUTION


def gae(rewards, values, last_value, gamma, lam):
    """GAE(λ) одной траектории: Â_t = δ_t + γλ·Â_{t+1}, проход с конца (Â_T = 0).

    Аргументы — как у td_errors, плюс lam — λ ∈ [0, 1].
    Возвращает кортеж (advantages, returns): два np.ndarray формы [T],
    где returns = advantages + values — цели R̂_t для критика.

    λ = 0 даёт Â_t = δ_t (TD), λ = 1 даёт Â_t = G_t − V(s_t) (Монте-Карло с baseline).
    Робот-курьер при λ = 0.5: Â = [0.2825, −0.15, 1.0].
    """
    # BEGIN SOLUTION
    delta = td_errors(rewards, values, last_value, gamma)
    advantages = np.zeros_like(delta)
    running = 0.0
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running  # Â_t = δ_t + γλ·Â_{t+1}
        advantages[t] = running
    return advantages, advantages + np.asarray(values, dtype=float)  # R̂_t = Â_t + V(s_t)
    # END SOLUTION


def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    """Клиппированная цель PPO, которую МАКСИМИЗИРУЮТ: mean(min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â)).

    Аргументы:
        logp_new — [B], log π_θ(a_t | s_t) под текущей политикой;
        logp_old — [B], log π_old(a_t | s_t) под политикой, собравшей данные;
        adv      — [B], оценки преимущества Â_t;
        eps      — ε, ширина клиппинга.
    ρ = exp(logp_new − logp_old). Возвращает одно число (float).

    Пять случаев урока (ε = 0.2): ρ = [1.1, 1.5, 0.5, 0.7, 1.5], Â = [1, 1, 1, −1, −1] → ≈ 0.1.
    """
    # BEGIN SOLUTION
    ratio = np.exp(np.asarray(logp_new, dtype=float) - np.asarray(logp_old, dtype=float))  # ρ_t = π_θ / π_old
    adv = np.asarray(adv, dtype=float)
    clipped = np.clip(ratio, 1 - eps, 1 + eps) * adv  # clip(ρ_t, 1−ε, 1+ε)·Â_t
    return float(np.mean(np.minimum(ratio * adv, clipped)))  # пессимистичный вариант: min
    # END SOLUTION


def normalize_advantages(adv, eps=1e-8):
    """Нормировка преимуществ по батчу: (Â − mean) / (std + eps).

    std — обычное стандартное отклонение NumPy (np.std, по всем элементам, ddof = 0).
    Возвращает np.ndarray той же формы, что adv.
    """
    # BEGIN SOLUTION
    adv = np.asarray(adv, dtype=float)
    return (adv - adv.mean()) / (adv.std() + eps)
    # END SOLUTION


def ppo_loss(logp_new, logp_old, adv, values_pred, returns, entropy, eps=0.2, c_v=0.5, c_e=0.01):
    """Полный loss PPO для МИНИМИЗАЦИИ:

        L = −L^CLIP + c_v · mean((V_pred − R̂)²) − c_e · mean(H)

    Аргументы:
        logp_new, logp_old, adv, eps — как у ppo_clip_objective;
        values_pred — [B], предсказания критика V_ψ(s_t);
        returns     — [B], цели критика R̂_t;
        entropy     — [B], энтропия политики H(π_θ(·|s_t)) в каждом состоянии;
        c_v, c_e    — веса ошибки критика и энтропийного бонуса.
    Возвращает одно число (float).

    Пример урока: ρ = [1.2, 0.8, 0.75, 2.0], Â = [1, −0.5, 2, −1], ошибка критика [−0.5, 0, −1, 1],
    энтропия 1.0 → L = −0.075 + 0.5·0.5625 − 0.01·1.0 ≈ 0.196.
    """
    # BEGIN SOLUTION
    policy_objective = ppo_clip_objective(logp_new, logp_old, adv, eps)
    errors = np.asarray(values_pred, dtype=float) - np.asarray(returns, dtype=float)  # V_pred − R̂
    value_loss = np.mean(errors ** 2)  # MSE критика
    entropy_bonus = np.mean(np.asarray(entropy, dtype=float))  # mean(H)
    return float(-policy_objective + c_v * value_loss - c_e * entropy_bonus)
    # END SOLUTION


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    """GAE для батча из T шагов, в котором подряд лежат несколько эпизодов.

    Аргументы (все формы [T] или [T, N] — N параллельных сред, время по оси 0):
        rewards     — r_t;
        values      — V(s_t);
        next_values — V(s_{t+1}) настоящего следующего наблюдения (для оборванного шага — того
                      наблюдения, на котором эпизод оборвали, а не первого наблюдения нового эпизода);
        terminated  — True, если на шаге t агент дошёл до конечного состояния;
        truncated   — True, если на шаге t эпизод оборван лимитом шагов;
                      флаги — bool или числа 0/1 (проверка даёт и те, и другие); шаг может быть
                      и terminated, и truncated сразу (лимит совпал с концом задачи) — это конец
                      задачи: бутстрапа нет;
        gamma, lam  — γ и λ.
    Возвращает (advantages, returns) той же формы, returns = advantages + values.

    Правила (как в коде PPO на CartPole из урока):
        δ_t = r_t + γ·V(s_{t+1})·(1 − terminated_t) − V(s_t)    — у конечного состояния будущего нет;
        Â_t = δ_t + γλ·(1 − done_t)·Â_{t+1},  done_t = terminated_t или truncated_t
                                                              — рекурсия не переходит через конец эпизода;
        после последнего шага батча Â_T = 0, а будущее уже учтено через next_values в δ.
    """
    # BEGIN SOLUTION
    r = np.asarray(rewards, dtype=float)
    v = np.asarray(values, dtype=float)
    v_next = np.asarray(next_values, dtype=float)
    term = np.asarray(terminated, dtype=bool)
    done = term | np.asarray(truncated, dtype=bool)  # эпизод кончился на шаге t: terminated или truncated
    delta = r + gamma * v_next * (~term) - v  # δ_t = r_t + γ·V(s_{t+1})·(1 − terminated_t) − V(s_t)
    advantages = np.zeros_like(delta)
    running = np.zeros_like(delta[0])  # Â_{t+1}: после последнего шага батча 0
    for t in reversed(range(len(delta))):
        running = delta[t] + gamma * lam * running * (~done[t])  # Â_t = δ_t + γλ·(1 − done_t)·Â_{t+1}
        advantages[t] = running
    return advantages, advantages + v  # R̂_t = Â_t + V(s_t)
    # END SOLUTION


# ---- Бонус: клиппированный loss критика (labml) ------------------------------------------------

def clipped_value_loss(values_pred, values_old, returns, eps=0.2):
    """БОНУС. Клиппированный loss критика, как в аннотированном PPO labml:

        V_clip = V_old + clip(V_pred − V_old, −ε, ε)
        L^VF = 0.5 · mean(max((V_pred − R̂)², (V_clip − R̂)²))

    Аргументы: values_pred — [B], новые предсказания V_ψ(s_t); values_old — [B], предсказания
    критика при сборе данных; returns — [B], цели R̂_t; eps — ε. Возвращает одно число (float).
    Критик не получает выгоды от того, чтобы уйти от старых предсказаний дальше, чем на ε.
    """
    # BEGIN SOLUTION
    v = np.asarray(values_pred, dtype=float)
    v_old = np.asarray(values_old, dtype=float)
    ret = np.asarray(returns, dtype=float)
    v_clip = v_old + np.clip(v - v_old, -eps, eps)  # V_clip = V_old + clip(V_pred − V_old, −ε, ε)
    return float(0.5 * np.mean(np.maximum((v - ret) ** 2, (v_clip - ret) ** 2)))  # max — пессимистичный вариант
    # END SOLUTION
