"""Часть control: Q-learning против SARSA на «прогулке по обрыву».

Оба алгоритма учат таблицу Q(s, a) по эпизодам, действуя ε-жадно (через epsilon_greedy: ничьи среди лучших
действий разбиваются случайно, в начале обучения Q = 0 везде), и отличаются одной строкой —
целью TD-обновления:
    SARSA (on-policy):       Q(s, a) ← Q(s, a) + α·(r + γ·Q(s', a') − Q(s, a)),  a' — действие, которое агент
                             действительно сделает в s' (выбранное ε-жадно);
    Q-learning (off-policy): Q(s, a) ← Q(s, a) + α·(r + γ·max_b Q(s', b) − Q(s, a)).
Если s' — конечное состояние (terminated), будущего нет: цель равна r.

Функции принимают любую среду с API toy-text сред Gymnasium (см. envs.py): reset(seed) → (obs, info),
step(a) → (obs, reward, terminated, truncated, info), observation_space.n, action_space.n.
"""
import numpy as np


def epsilon_greedy(q_values, epsilon, rng):
    """ε-жадный выбор действия.

    Аргументы:
        q_values — [A], оценки Q(s, ·) для текущего состояния (список или массив);
        epsilon  — ε ∈ [0, 1], вероятность случайного действия;
        rng      — np.random.Generator, единственный источник случайности.
    Возвращает int — номер действия.

    С вероятностью ε — случайное действие, равновероятно из ВСЕХ A действий (жадное тоже может выпасть);
    иначе — жадное argmax_a Q(s, a), а если максимумов несколько (значений, в точности равных max), то случайное из них
    (np.argmax всегда брал бы первое — при Q = 0 в начале обучения агент ходил бы только вверх).
    Итог: P(a) = (1 − ε)/k + ε/A для каждого из k лучших действий и ε/A для остальных.
    """
    # TODO: ваш код
    raise NotImplementedError("TODO: epsilon_greedy")


def q_learning(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    """Табличный Q-learning: действуем ε-жадно, а цель строим по жадной политике (max).

    Аргументы:
        env        — среда с API Gymnasium (например, envs.CliffWalking());
        n_episodes — число эпизодов;
        alpha      — шаг обучения α;
        gamma      — дисконт γ;
        epsilon    — ε для ε-жадного поведения;
        seed       — зерно: один генератор rng = np.random.default_rng(seed) для всех выборов действий,
                     первый эпизод начинается с env.reset(seed=seed), следующие — с env.reset().
    Возвращает (Q, episode_returns):
        Q               — np.ndarray [S, A], S = env.observation_space.n, A = env.action_space.n, вначале нули;
        episode_returns — np.ndarray [n_episodes], сумма наград каждого эпизода (без дисконта, при любом γ).

    Шаг алгоритма (в s выбрали a = ε-жадно по Q(s, ·), получили r, s'):
        Q(s, a) ← Q(s, a) + α·(r + γ·max_b Q(s', b)·(1 − terminated) − Q(s, a)).
    Эпизод идёт, пока не terminated и не truncated; при truncated s' не конечное — бутстрап остаётся,
    а шаг, у которого оба флага (лимит совпал с концом задачи), — конечный: цель r.
    Результат полностью определяется seed. В каком порядке вызывать rng внутри эпизода, не предписано: проверки
    сверяют Q с записанными переходами и судят о поведении по частотам и по нескольким seed.
    """
    # TODO: ваш код
    raise NotImplementedError("TODO: q_learning")


def sarsa(env, n_episodes, alpha=0.5, gamma=1.0, epsilon=0.1, seed=0):
    """Табличный SARSA: цель строится по действию a', которое агент действительно сделает дальше.

    Аргументы и ответ — как у q_learning (тот же протокол случайности: один rng = default_rng(seed)).

    Шаг алгоритма (S, A, R, S', A'):
        в s' выбираем a' = ε-жадно по Q(s', ·) — и это же действие делаем на следующем шаге;
        Q(s, a) ← Q(s, a) + α·(r + γ·Q(s', a')·(1 − terminated) − Q(s, a)).
    В конечном s' следующего действия нет: цель равна r (и когда terminated и truncated оба). При truncated
    без terminated s' не конечное: a' выбирается ε-жадно и бутстрап остаётся, хотя эпизод на этом кончается.
    Первое действие эпизода выбирается ε-жадно в стартовом состоянии.
    """
    # TODO: ваш код
    raise NotImplementedError("TODO: sarsa")
