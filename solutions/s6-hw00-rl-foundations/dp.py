"""Часть dp: уравнение Беллмана, оценивание политики, value iteration и policy iteration.

Табличная MDP задаётся массивами (их отдаёт, например, envs.GridWorld(...).to_mdp()):
    P      — [S, A, S'], P[s, a, s'] — вероятность перейти из s в s' по действию a (строки в сумме 1);
    R      — [S, A], R[s, a] — ожидаемая немедленная награда за действие a в состоянии s;
    policy — [S, A], policy[s, a] = π(a | s) (строки в сумме 1; детерминированная политика — one-hot строки);
    gamma  — дисконт γ ∈ [0, 1].
Конечное состояние поглощающее: P[s, a, s] = 1 и R[s, a] = 0 для всех a, поэтому его ценность 0
и отдельная маска не нужна.

Общие правила части: функции принимают списки и массивы NumPy (float32, float64 и целые числа), не меняют свои
аргументы и на некорректный вход (строки P или policy не дают в сумме 1 — каждая строка, а не сумма всех
элементов; отрицательные вероятности; формы P, R, policy, V не согласованы — форма целиком: R и policy
ровно [S, A], V ровно [S], а не [S, 1] или [1, A], которые NumPy молча растянул бы) бросают ValueError
с понятным сообщением. Удобно написать
одну свою функцию проверки входа и вызывать её в начале всех пяти функций.

Правило выбора при равенстве (для value_iteration и policy_iteration): жадная политика детерминирована
и в каждом состоянии выбирает действие с наименьшим номером среди тех, чьё Q(s, a) отличается от
max_a Q(s, a) не больше чем на 1e-8 · max(1, |max_a Q(s, a)|).
"""
import numpy as np


# BEGIN SOLUTION
def _validated(P, R, policy=None):
    """(P, R, policy) как float-массивы после проверки форм и распределений; иначе ValueError."""
    P = np.asarray(P, dtype=float)
    R = np.asarray(R, dtype=float)
    if P.ndim != 3 or P.shape[0] != P.shape[2]:
        raise ValueError(f"P должна иметь форму [S, A, S], а имеет {P.shape}")
    if R.shape != P.shape[:2]:
        raise ValueError(f"R должна иметь форму [S, A] = {P.shape[:2]}, а имеет {R.shape}")
    if np.any(P < 0) or not np.allclose(P.sum(axis=2), 1.0, atol=1e-6):
        raise ValueError("каждая строка P[s, a, :] должна быть распределением: вероятности ≥ 0, сумма 1")
    if policy is None:
        return P, R, None
    policy = np.asarray(policy, dtype=float)
    if policy.shape != R.shape:
        raise ValueError(f"policy должна иметь форму [S, A] = {R.shape}, а имеет {policy.shape}")
    if np.any(policy < 0) or not np.allclose(policy.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError("каждая строка policy[s, :] должна быть распределением: вероятности ≥ 0, сумма 1")
    return P, R, policy


def _greedy(Q):
    """Детерминированная жадная политика [S, A]: при равенстве — действие с наименьшим номером."""
    best = Q.max(axis=1, keepdims=True)
    is_best = Q >= best - 1e-8 * np.maximum(1.0, np.abs(best))
    policy = np.zeros_like(Q)
    policy[np.arange(len(Q)), np.argmax(is_best, axis=1)] = 1.0  # argmax булева массива — первый True
    return policy
# END SOLUTION


def solve_bellman(P, R, policy, gamma):
    """Ценность политики V^π точно, как решение линейной системы уравнений Беллмана.

        V^π = r_π + γ·P_π·V^π   ⇔   (I − γ·P_π)·V^π = r_π,
        где P_π[s, s'] = Σ_a π(a|s)·P[s, a, s'],   r_π[s] = Σ_a π(a|s)·R[s, a].

    Аргументы:
        P      — [S, A, S], вероятности переходов;
        R      — [S, A], ожидаемые награды;
        policy — [S, A], политика π(a | s);
        gamma  — дисконт γ.
    Возвращает np.ndarray формы [S] — V^π(s) для каждого состояния.

    При γ = 1 в эпизодической задаче система вырождена (у поглощающего состояния строка I − P_π нулевая):
    тогда бросьте ValueError с объяснением (или верните верные ценности, если умеете), а ценности
    считайте итеративно — policy_evaluation.
    Пример: на сетке 5×5 Саттона и Барто (envs.gridworld_5x5()) со случайной политикой (все π = 1/4)
    и γ = 0.9 ценность клетки A равна 8.8, клетки B — 5.3.
    """
    # BEGIN SOLUTION
    P, R, policy = _validated(P, R, policy)
    P_pi = np.einsum("sa,sat->st", policy, P)  # P_π[s, s'] = Σ_a π(a|s) P[s, a, s']
    r_pi = np.sum(policy * R, axis=1)  # r_π[s] = Σ_a π(a|s) R[s, a]
    system = np.eye(len(r_pi)) - gamma * P_pi  # I − γP_π
    if np.linalg.cond(system) > 1e12:
        raise ValueError("система (I − γP_π)V = r_π вырождена: при γ = 1 у поглощающих состояний ценность не "
                         "определяется ею однозначно; используйте policy_evaluation")
    return np.linalg.solve(system, r_pi)  # V^π = (I − γP_π)⁻¹ r_π
    # END SOLUTION


def policy_evaluation(P, R, policy, gamma, tol=1e-10):
    """Ценность политики V^π итеративно: повторяем обновление Беллмана для всех состояний (sweep)

        V_{k+1}(s) = Σ_a π(a|s)·(R[s, a] + γ·Σ_{s'} P[s, a, s']·V_k(s')),   V_0 = 0,

    пока max_s |V_{k+1}(s) − V_k(s)| не станет меньше tol (порог абсолютный: при нулевых наградах V_1 = V_0 = 0,
    и цикл кончается сразу).

    Аргументы — как у solve_bellman, плюс tol — порог остановки.
    Возвращает np.ndarray формы [S].

    Работает и при γ = 1 в эпизодической задаче, если политика доводит эпизод до конечного состояния:
    на сетке 4×4 Саттона и Барто (envs.gridworld_4x4(), каждый ход −1) случайная политика даёт
    ценности 0, −14, −20, −22 в первой строке.
    Обновлять V можно «на месте» (по одному состоянию) или целым вектором — оба способа сходятся.
    """
    # BEGIN SOLUTION
    P, R, policy = _validated(P, R, policy)
    P_pi = np.einsum("sa,sat->st", policy, P)  # P_π[s, s'] = Σ_a π(a|s) P[s, a, s']
    r_pi = np.sum(policy * R, axis=1)  # r_π[s] = Σ_a π(a|s) R[s, a]
    V = np.zeros(len(r_pi))  # V_0 = 0
    while True:
        V_new = r_pi + gamma * P_pi @ V  # V_{k+1} = r_π + γ P_π V_k
        if np.max(np.abs(V_new - V)) < tol:  # max_s |V_{k+1}(s) − V_k(s)| < tol
            return V_new
        V = V_new
    # END SOLUTION


def q_from_v(P, R, V, gamma):
    """Ценности действий по ценностям состояний: Q(s, a) = R[s, a] + γ·Σ_{s'} P[s, a, s']·V(s').

    Аргументы:
        P — [S, A, S]; R — [S, A]; V — [S], ценности состояний; gamma — дисконт γ.
    Возвращает np.ndarray формы [S, A].
    """
    # BEGIN SOLUTION
    P, R, _ = _validated(P, R)
    V = np.asarray(V, dtype=float)
    if V.shape != (P.shape[0],):
        raise ValueError(f"V должна иметь форму [S] = ({P.shape[0]},), а имеет {V.shape}")
    return R + gamma * P @ V  # (P @ V)[s, a] = Σ_{s'} P[s, a, s'] V(s')
    # END SOLUTION


def value_iteration(P, R, gamma, tol=1e-10):
    """Value iteration: V_{k+1}(s) = max_a (R[s, a] + γ·Σ_{s'} P[s, a, s']·V_k(s')), V_0 = 0,

    пока max_s |V_{k+1}(s) − V_k(s)| ≥ tol; затем жадная политика по Q(s, a) последнего V.

    Аргументы: P — [S, A, S]; R — [S, A]; gamma — дисконт γ; tol — порог остановки.
    Возвращает кортеж (V, policy): V — np.ndarray [S], оценка V*; policy — np.ndarray [S, A],
    детерминированная жадная политика (one-hot строки; при равенстве — правило из описания модуля).

    Сетка 5×5 Саттона и Барто, γ = 0.9: V*(A) = 24.4, V*(B) = 19.4.
    """
    # BEGIN SOLUTION
    P, R, _ = _validated(P, R)
    V = np.zeros(P.shape[0])  # V_0 = 0
    while True:
        V_new = q_from_v(P, R, V, gamma).max(axis=1)  # V_{k+1}(s) = max_a Q_k(s, a)
        if np.max(np.abs(V_new - V)) < tol:
            break
        V = V_new
    return V_new, _greedy(q_from_v(P, R, V_new, gamma))  # π(s) = argmax_a Q(s, a) по последнему V
    # END SOLUTION


def policy_iteration(P, R, gamma):
    """Policy iteration: начинаем со случайной политики (все π(a|s) = 1/A) и чередуем

        1. оценивание: V = V^π (solve_bellman при γ < 1, policy_evaluation при γ = 1);
        2. улучшение: π'(s) = argmax_a Q(s, a), Q = q_from_v(P, R, V, γ) (правило равенства — из описания модуля);
    пока политика не перестанет меняться.

    Аргументы: P — [S, A, S]; R — [S, A]; gamma — дисконт γ (при γ = 1 каждая жадная политика должна
    доводить эпизод до конца).
    Возвращает кортеж (V, policy): V — np.ndarray [S], ценность найденной политики (это V*);
    policy — np.ndarray [S, A], детерминированная оптимальная политика (one-hot строки).

    Осторожно с равенствами: если брать голый np.argmax, то у равноценных действий Q различаются лишь
    ошибкой округления (~1e-15), выбор между ними может меняться от итерации к итерации, и цикл «пока
    политика меняется» может не закончиться. На сетке 5×5, где у многих клеток по два-три равноценных
    действия, это зависит от процессора и сборки NumPy: на одной машине цикл кончается, на другой — нет.
    Поэтому — правило равенства с допуском; проверка «Правило равенства» ловит голый argmax на любой машине.
    """
    # BEGIN SOLUTION
    P, R, _ = _validated(P, R)
    S, A = R.shape
    policy = np.full((S, A), 1.0 / A)  # случайная политика: все π(a|s) = 1/A
    while True:
        V = solve_bellman(P, R, policy, gamma) if gamma < 1 else policy_evaluation(P, R, policy, gamma)  # 1. V^π
        improved = _greedy(q_from_v(P, R, V, gamma))  # 2. π'(s) = argmax_a Q^π(s, a)
        if np.array_equal(improved, policy):
            return V, policy
        policy = improved
    # END SOLUTION
