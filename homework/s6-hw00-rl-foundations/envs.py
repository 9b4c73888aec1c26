"""Среды домашней работы (готовый код, его не нужно менять и он не оценивается).

API повторяет toy-text среды Gymnasium, но без зависимости от Gymnasium:
    obs, info = env.reset(seed=None)
    obs, reward, terminated, truncated, info = env.step(action)
    env.observation_space.n, env.action_space.n — число состояний и действий.
Код, написанный против этого API, работает и на настоящей среде Gymnasium.

Мир-сетка (GridWorld) отдаёт ещё и табличную MDP (P, R): P[s, a, s'] — вероятность перейти из s в s'
по действию a (строки P[s, a, :] в сумме дают 1), R[s, a] — ожидаемая немедленная награда. Конечное
состояние поглощающее: из него все действия ведут в него же с наградой 0.
"""
import numpy as np


class Discrete:
    """Конечное множество {0, 1, …, n−1}, как gymnasium.spaces.Discrete: поле n и метод sample()."""

    def __init__(self, n, seed=None):
        self.n = int(n)
        self.np_random = np.random.default_rng(seed)

    def seed(self, seed=None):
        self.np_random = np.random.default_rng(seed)

    def sample(self):
        return int(self.np_random.integers(self.n))

    def contains(self, x):
        return isinstance(x, (int, np.integer)) and 0 <= int(x) < self.n

    def __repr__(self):
        return f"Discrete({self.n})"


# ---- Прогулка по обрыву (часть control) ---------------------------------------------------------

class CliffWalking:
    """«Прогулка по обрыву» (Sutton & Barto, пример 6.6) с динамикой CliffWalking из Gymnasium.

    Сетка 4×12, состояние s = строка·12 + столбец (строка 0 — верхняя):

        . . . . . . . . . . . .      строка 0   (состояния 0–11)
        . . . . . . . . . . . .      строка 1   (12–23)
        . . . . . . . . . . . .      строка 2   (24–35)
        S C C C C C C C C C C G      строка 3   (36–47): S = 36 — старт, C — обрыв, G = 47 — цель

    Действия: UP = 0, RIGHT = 1, DOWN = 2, LEFT = 3. Ход в стену оставляет агента на месте.
    Каждый шаг даёт награду −1; шаг в обрыв даёт −100 и возвращает агента на старт, эпизод при
    этом НЕ заканчивается; шаг в цель даёт −1 и заканчивает эпизод (terminated = True).
    Кратчайший путь — вдоль края обрыва: 13 шагов, отдача −13.

    max_episode_steps — необязательный лимит шагов: по его достижении эпизод обрывается
    (truncated = True). По умолчанию лимита нет, как у CliffWalking в Gymnasium.
    Среда детерминирована; seed в reset задаёт только генератор action_space.sample().
    """

    UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3
    ARROWS = "↑→↓←"
    shape = (4, 12)
    start_state = 36
    goal_state = 47

    def __init__(self, max_episode_steps=None):
        self.n_rows, self.n_cols = self.shape
        self.observation_space = Discrete(self.n_rows * self.n_cols)
        self.action_space = Discrete(4)
        self.max_episode_steps = max_episode_steps
        self.cliff = np.zeros(self.shape, dtype=bool)
        self.cliff[3, 1:-1] = True
        self.s = self.start_state
        self.elapsed_steps = 0

    def move(self, s, a):
        """Детерминированный переход без побочных эффектов: (s_next, reward, terminated)."""
        row, col = divmod(int(s), self.n_cols)
        d_row, d_col = ((-1, 0), (0, 1), (1, 0), (0, -1))[int(a)]
        row = min(max(row + d_row, 0), self.n_rows - 1)
        col = min(max(col + d_col, 0), self.n_cols - 1)
        if self.cliff[row, col]:
            return self.start_state, -100.0, False  # в обрыв: −100 и обратно на старт
        s_next = row * self.n_cols + col
        return s_next, -1.0, s_next == self.goal_state

    def reset(self, seed=None, options=None):
        """Начать эпизод: (obs, info), obs = 36 (старт)."""
        if seed is not None:
            self.action_space.seed(seed)
        self.s = self.start_state
        self.elapsed_steps = 0
        return self.s, {"prob": 1.0}

    def step(self, action):
        """Сделать шаг: (obs, reward, terminated, truncated, info)."""
        if not self.action_space.contains(action):
            raise ValueError(f"действие должно быть целым числом от 0 до 3, получено {action!r}")
        self.s, reward, terminated = self.move(self.s, action)
        self.elapsed_steps += 1
        truncated = (self.max_episode_steps is not None and self.elapsed_steps >= self.max_episode_steps
                     and not terminated)
        return self.s, reward, terminated, truncated, {"prob": 1.0}

    def greedy_path(self, Q, max_steps=100):
        """Пройти от старта по жадной политике argmax_a Q(s, a) (при равенстве — меньшее действие).

        Q — [48, 4]. Возвращает словарь:
            states  — посещённые состояния, начиная со старта;
            actions — сделанные действия;
            return  — сумма наград;
            reached — дошли ли до цели;
            looped  — жадная политика зациклилась (состояние повторилось) или упала в обрыв.
        Путь останавливается у цели, при повторе состояния или через max_steps шагов.
        """
        Q = np.asarray(Q, dtype=float)
        s, seen = self.start_state, {self.start_state}
        states, actions, total = [s], [], 0.0
        reached = looped = False
        for _ in range(max_steps):
            a = int(np.argmax(Q[s]))
            s, r, terminated = self.move(s, a)
            actions.append(a)
            states.append(s)
            total += r
            if terminated:
                reached = True
                break
            if s in seen:
                looped = True
                break
            seen.add(s)
        return {"states": states, "actions": actions, "return": total, "reached": reached, "looped": looped}

    def draw(self, Q=None, path=None):
        """Текстовая картинка сетки; со стрелками жадного пути, если дана Q (или готовый path).

            S — старт, G — цель, C — обрыв, стрелки ↑→↓← — действие жадной политики на пути.
        """
        if path is None and Q is not None:
            path = self.greedy_path(Q)
        grid = [["." for _ in range(self.n_cols)] for _ in range(self.n_rows)]
        for row, col in zip(*np.nonzero(self.cliff)):
            grid[row][col] = "C"
        grid[3][0], grid[3][-1] = "S", "G"
        if path is not None:
            for s, a in zip(path["states"], path["actions"]):
                row, col = divmod(s, self.n_cols)
                grid[row][col] = self.ARROWS[a]
        lines = [" ".join(row) for row in grid]
        if path is not None:
            status = "дошёл до цели" if path["reached"] else ("зациклился" if path["looped"] else "не дошёл")
            lines.append(f"жадный путь: {len(path['actions'])} шагов, отдача {path['return']:g}, {status}")
        return "\n".join(lines)


# ---- Мир-сетка из текстовой карты (часть dp) -------------------------------------------------

GRID_MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))  # действия: 0 — вверх, 1 — вправо, 2 — вниз, 3 — влево
GRID_ARROWS = "↑→↓←"


class GridWorld:
    """Мир-сетка, заданный текстовой картой; экспортируется как MDP (P, R).

    Карта — строки одинаковой длины, один символ на клетку (пробелы между символами можно ставить,
    они игнорируются):
        ``.`` — обычная клетка; ``#`` — стена (не состояние, войти в неё нельзя);
        ``S`` — старт для reset() (если его нет — стартуем из состояния 0);
        символ из ``terminals`` — конечная клетка; символ из ``teleports`` — особая клетка;
        любой другой символ — обычная клетка с меткой (например, цель телепорта).

    Аргументы:
        text_map    — карта (str, строки через перевод строки);
        terminals   — {символ: награда}: войдя в такую клетку, агент получает step_reward + награда,
                      и эпизод кончается (клетка поглощающая, дальше награда 0);
        teleports   — {символ: (символ_цели, награда)}: ЛЮБОЕ действие в такой клетке переносит агента
                      в клетку с символом цели и даёт указанную награду (как A → A′ и B → B′ в примере
                      Саттона и Барто);
        step_reward — награда за каждый обычный ход;
        bump_reward — награда за попытку уйти за край сетки или в стену: агент остаётся на месте
                      и получает bump_reward (по умолчанию — то же, что step_reward);
        slip        — вероятность поскользнуться: с вероятностью slip/2 агент идёт в каждую из двух
                      перпендикулярных сторон (0 — детерминированный мир; 0.2 — мир Рассела и Норвига).

    Состояния — клетки без стен, пронумерованные по строкам слева направо, сверху вниз;
    ``cells[s]`` — (строка, столбец) состояния s, ``state_of[(строка, столбец)]`` — номер состояния.
    """

    def __init__(self, text_map, terminals=None, teleports=None, step_reward=0.0, bump_reward=None, slip=0.0):
        self.grid = [list("".join(line.split())) for line in text_map.strip().splitlines()]
        if not self.grid or len({len(row) for row in self.grid}) != 1:
            raise ValueError("карта мира-сетки должна быть прямоугольной: строки одинаковой длины")
        self.terminals = dict(terminals or {})
        self.teleports = dict(teleports or {})
        self.step_reward = float(step_reward)
        self.bump_reward = self.step_reward if bump_reward is None else float(bump_reward)
        self.slip = float(slip)
        self.shape = (len(self.grid), len(self.grid[0]))
        self.cells = [(r, c) for r in range(self.shape[0]) for c in range(self.shape[1]) if self.grid[r][c] != "#"]
        self.state_of = {cell: s for s, cell in enumerate(self.cells)}
        self.n_states, self.n_actions = len(self.cells), len(GRID_MOVES)
        self.observation_space = Discrete(self.n_states)
        self.action_space = Discrete(self.n_actions)
        self.terminal_states = np.array([self.grid[r][c] in self.terminals for r, c in self.cells])
        self.P, self.R = self._build()
        starts = [s for s, (r, c) in enumerate(self.cells) if self.grid[r][c] == "S"]
        self.start_state = starts[0] if starts else 0
        self._rng = np.random.default_rng()
        self.state = self.start_state

    def _cell_with(self, symbol):
        found = [s for s, (r, c) in enumerate(self.cells) if self.grid[r][c] == symbol]
        if len(found) != 1:
            raise ValueError(f"на карте должна быть ровно одна клетка «{symbol}», найдено {len(found)}")
        return found[0]

    def _move(self, s, a):
        """(следующее состояние, награда) детерминированного хода a из s."""
        r, c = self.cells[s]
        dr, dc = GRID_MOVES[a]
        nr, nc = r + dr, c + dc
        if not (0 <= nr < self.shape[0] and 0 <= nc < self.shape[1]) or self.grid[nr][nc] == "#":
            return s, self.bump_reward  # за край или в стену: остаёмся на месте
        return self.state_of[(nr, nc)], self.step_reward + self.terminals.get(self.grid[nr][nc], 0.0)

    def _build(self):
        S, A = self.n_states, self.n_actions
        P = np.zeros((S, A, S))
        R = np.zeros((S, A))
        for s, (r, c) in enumerate(self.cells):
            symbol = self.grid[r][c]
            if symbol in self.terminals:
                P[s, :, s] = 1.0  # поглощающее состояние с нулевой наградой
                continue
            if symbol in self.teleports:
                target, reward = self.teleports[symbol]
                P[s, :, self._cell_with(target)] = 1.0
                R[s, :] = reward
                continue
            for a in range(A):
                outcomes = [(a, 1.0 - self.slip), ((a + 1) % A, self.slip / 2), ((a - 1) % A, self.slip / 2)]
                for direction, prob in outcomes:
                    if prob == 0:
                        continue
                    s_next, reward = self._move(s, direction)
                    P[s, a, s_next] += prob
                    R[s, a] += prob * reward  # R[s, a] — ожидаемая награда
        return P, R

    def to_mdp(self):
        """(P, R): копии массивов P [S, A, S'] и R [S, A]."""
        return self.P.copy(), self.R.copy()

    # ---- Gymnasium-подобный интерфейс ----

    def reset(self, seed=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = self.start_state
        return self.state, {}

    def step(self, action):
        s = self.state
        s_next = int(self._rng.choice(self.n_states, p=self.P[s, action]))
        reward = float(self.R[s, action]) if self.slip == 0 else self._sampled_reward(s, action, s_next)
        self.state = s_next
        return s_next, reward, bool(self.terminal_states[s_next]), False, {}

    def _sampled_reward(self, s, a, s_next):
        symbol = self.grid[self.cells[s][0]][self.cells[s][1]]
        if symbol in self.terminals or symbol in self.teleports:
            return float(self.R[s, a])
        rewards = [reward for d in (a, (a + 1) % 4, (a - 1) % 4) for t, reward in [self._move(s, d)] if t == s_next]
        return float(rewards[0])

    # ---- печать ценностей и политики на сетке ----

    def format_values(self, V, digits=1):
        """Строка: таблица ценностей V [S] на сетке (стены — #)."""
        V = np.asarray(V, dtype=float)
        texts = {s: f"{V[s]:.{digits}f}" for s in range(self.n_states)}
        return self._table(texts)

    def format_policy(self, policy):
        """Строка: политика [S, A] стрелками на сетке; при равных вероятностях — несколько стрелок.

        Конечные и особые клетки показаны своими символами, стены — #.
        """
        policy = np.asarray(policy, dtype=float)
        texts = {}
        for s, (r, c) in enumerate(self.cells):
            symbol = self.grid[r][c]
            if symbol in self.terminals or symbol in self.teleports:
                texts[s] = symbol
            else:
                best = np.flatnonzero(policy[s] >= policy[s].max() - 1e-9)
                texts[s] = "".join(GRID_ARROWS[a] for a in best)
        return self._table(texts)

    def print_values(self, V, digits=1):
        print(self.format_values(V, digits))

    def print_policy(self, policy):
        print(self.format_policy(policy))

    def _table(self, texts):
        width = max(len(t) for t in texts.values())
        lines = []
        for r in range(self.shape[0]):
            row = [texts[self.state_of[(r, c)]] if (r, c) in self.state_of else "#" for c in range(self.shape[1])]
            lines.append(" ".join(t.rjust(width) for t in row))
        return "\n".join(lines)


def gridworld_5x5():
    """Мир-сетка 5×5 из учебника Саттона и Барто (пример 3.5): из A любое действие даёт +10 и переносит
    в A′, из B — +5 и в B′; попытка уйти за край стоит −1, остальные ходы — 0. Конечных клеток нет
    (задача продолжающаяся, нужна γ < 1; в учебнике γ = 0.9)."""
    return GridWorld("""
        . A . B .
        . . . . .
        . . . b .
        . . . . .
        . a . . .
    """, teleports={"A": ("a", 10.0), "B": ("b", 5.0)}, step_reward=0.0, bump_reward=-1.0)


def gridworld_4x4():
    """Мир-сетка 4×4 из учебника Саттона и Барто (пример 4.1): две конечные клетки в углах (T),
    каждый ход, включая ход за край, стоит −1. Эпизодическая задача: годится γ = 1."""
    return GridWorld("""
        T . . .
        . . . .
        . . . .
        . . . T
    """, terminals={"T": 0.0}, step_reward=-1.0)


def gridworld_4x3(step_reward=-0.04):
    """Мир 4×3 Рассела и Норвига: стена в центре, конечные клетки +1 (G) и −1 (X), агент скользит
    (с вероятностью 0.8 идёт куда хотел, по 0.1 — в перпендикулярные стороны), каждый ход стоит
    step_reward. В клетку-цель входим с наградой step_reward + 1, в ловушку — step_reward − 1."""
    return GridWorld("""
        . . . G
        . # . X
        S . . .
    """, terminals={"G": 1.0, "X": -1.0}, step_reward=step_reward, slip=0.2)


# ---- Случайное блуждание (часть mc_td) ---------------------------------------------------------

class RandomWalk:
    """Случайное блуждание Саттона и Барто (пример 6.2) с n_states непромежуточными состояниями.

    Состояния пронумерованы 0 … n_states + 1: 0 и n_states + 1 — конечные (выходы слева и справа),
    1 … n_states — обычные (для n_states = 5 это A … E), старт — в середине (3 для пяти состояний).
    На каждом шаге агент с вероятностью 1/2 идёт влево или вправо (действие не влияет на ход, у среды
    одно действие 0). Награда +1 за выход справа, иначе 0; γ = 1.
    Истинные ценности: V(i) = i / (n_states + 1), для пяти состояний 1/6, 2/6, …, 5/6; у конечных — 0.
    """

    def __init__(self, n_states=5):
        self.n_inner = int(n_states)
        self.observation_space = Discrete(self.n_inner + 2)
        self.action_space = Discrete(1)
        self.start_state = (self.n_inner + 1) // 2 if self.n_inner % 2 else self.n_inner // 2
        self._rng = np.random.default_rng()
        self.state = self.start_state

    def true_values(self):
        """np.ndarray [n_states + 2]: истинные ценности при γ = 1 (у конечных состояний 0)."""
        V = np.arange(self.n_inner + 2) / (self.n_inner + 1)
        V[-1] = 0.0
        return V

    def reset(self, seed=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = self.start_state
        return self.state, {}

    def step(self, action=0):
        s_next = self.state + (1 if self._rng.integers(2) else -1)
        terminated = s_next == 0 or s_next == self.n_inner + 1
        reward = 1.0 if s_next == self.n_inner + 1 else 0.0
        self.state = s_next
        return s_next, reward, terminated, False, {}

    def episodes(self, n_episodes, seed=None):
        """Список из n_episodes эпизодов; эпизод — список переходов (s, r, s_next, terminated).

        С одним и тем же seed получаются одни и те же эпизоды.
        """
        self.reset(seed=seed)
        out = []
        for _ in range(n_episodes):
            s, _ = self.reset()
            episode, terminated = [], False
            while not terminated:
                s_next, r, terminated, _, _ = self.step(0)
                episode.append((s, r, s_next, terminated))
                s = s_next
            out.append(episode)
        return out


def random_walk_episodes(n_episodes, seed=0, n_states=5):
    """Эпизоды случайного блуждания: RandomWalk(n_states).episodes(n_episodes, seed)."""
    return RandomWalk(n_states).episodes(n_episodes, seed=seed)
