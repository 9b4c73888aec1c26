"""Часть mc_td: предсказание ценностей методом Монте-Карло и TD(0).

Эпизод — список переходов (s, r, s_next, terminated): из состояния s агент получил награду r
и попал в s_next; terminated = True, если s_next — конечное состояние (у него будущего нет, V = 0).
Если у последнего перехода terminated = False, эпизод оборван (лимит шагов, конец данных):
будущее у s_next есть, и TD(0) его бутстрапит. Состояния — целые числа 0 … n_states − 1;
у случайного блуждания (envs.RandomWalk) это 0 … 6, где 0 и 6 — конечные.

Общие правила части: функции принимают списки и массивы NumPy (float32 и float64), не меняют свои
аргументы (ни эпизоды, ни V0) и возвращают np.ndarray.
"""
import numpy as np


def discounted_returns(rewards, gamma):
    """Отдачи (reward-to-go) каждого шага одного эпизода: G_t = r_t + γ·r_{t+1} + γ²·r_{t+2} + …

    Считаются одним проходом с конца: G_{T−1} = r_{T−1},  G_t = r_t + γ·G_{t+1}.

    Аргументы:
        rewards — [T], награды r_0 … r_{T−1} одного эпизода (список или массив, числа могут быть целыми);
        gamma   — дисконт γ.
    Возвращает np.ndarray формы [T] из float.

    Робот-курьер из урока: r = [1, 0, 2], γ = 0.9 → G = [2.62, 1.8, 2].
    """
    # BEGIN SOLUTION
    rewards = np.asarray(rewards, dtype=float)
    G = np.zeros(len(rewards))
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running  # G_t = r_t + γ G_{t+1}
        G[t] = running
    return G
    # END SOLUTION


def mc_prediction(episodes, n_states, gamma, first_visit=True, alpha=None):
    """Предсказание V^π методом Монте-Карло по готовым эпизодам.

    Для каждого эпизода считаем отдачи G_t (discounted_returns) и для каждого шага t, на котором
    агент был в состоянии s_t, обновляем V(s_t):
        alpha is None — выборочное среднее: V(s) = среднее всех учтённых отдач из s
                        (инкрементно: N(s) += 1, V(s) += (G_t − V(s)) / N(s));
        alpha задан   — постоянный шаг: V(s) += α·(G_t − V(s)), шаги эпизода — по порядку t = 0, 1, …
                        (alpha = 0 тоже задан: шаг 0, V не меняется и остаётся нулевой)
                        (every-visit можно проходить и с конца, t = T−1, …, 0, как в псевдокоде учебника:
                        проверка примет оба порядка; у first-visit порядок не важен)
    first_visit = True — в каждом эпизоде учитываем только ПЕРВОЕ посещение s;
    first_visit = False — каждое посещение (every-visit).

    Аргументы:
        episodes    — список эпизодов, эпизод — список (s, r, s_next, terminated);
        n_states    — число состояний S;
        gamma       — дисконт γ;
        first_visit — first-visit (True, по умолчанию) или every-visit (False);
        alpha       — None (средние, по умолчанию) или постоянный шаг α (0 — тоже шаг, см. выше).
    Возвращает np.ndarray формы [S]; состояния, где агент ни разу не был, остаются с V = 0.
    """
    # BEGIN SOLUTION
    V = np.zeros(n_states)
    counts = np.zeros(n_states)
    for episode in episodes:
        states = [int(s) for s, _, _, _ in episode]
        G = discounted_returns([r for _, r, _, _ in episode], gamma)  # G_t каждого шага
        first_t = {}  # s → шаг t первого посещения s в этом эпизоде
        for t, s in enumerate(states):
            first_t.setdefault(s, t)
        for t, s in enumerate(states):
            if first_visit and first_t[s] != t:
                continue  # first-visit: не первое посещение s в этом эпизоде
            if alpha is None:
                counts[s] += 1
                V[s] += (G[t] - V[s]) / counts[s]  # среднее отдач: V ← V + (G − V)/N
            else:
                V[s] += alpha * (G[t] - V[s])  # постоянный шаг: V ← V + α(G − V)
    return V
    # END SOLUTION


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    """Предсказание V^π методом TD(0): после КАЖДОГО перехода (s, r, s_next, terminated)

        δ = r + γ·V(s_next)·(1 − terminated) − V(s),    V(s) ← V(s) + α·δ,

    переходы — по порядку, эпизод за эпизодом (онлайн: следующее обновление уже видит предыдущие).
    У конечного состояния будущего нет: при terminated = True цель — просто r.

    Аргументы:
        episodes — список эпизодов, эпизод — список (s, r, s_next, terminated);
        n_states — число состояний S;
        alpha    — шаг α;
        gamma    — дисконт γ;
        V0       — [S], начальные ценности (None — нули; числа могут быть целыми); сам V0 менять нельзя;
        n_epochs — сколько раз пройти по всему набору эпизодов (n_epochs > 1 — повторное проигрывание
                   того же батча; при малом α это пакетный TD(0) из учебника).
    Возвращает np.ndarray формы [S].
    """
    # BEGIN SOLUTION
    V = np.zeros(n_states) if V0 is None else np.array(V0, dtype=float)  # копия: V0 не трогаем
    for _ in range(n_epochs):
        for episode in episodes:
            for s, r, s_next, terminated in episode:
                target = r if terminated else r + gamma * V[s_next]  # конечное состояние не бутстрапим
                V[s] += alpha * (target - V[s])  # V(s) ← V(s) + α·δ, δ = цель − V(s)
    return V
    # END SOLUTION
