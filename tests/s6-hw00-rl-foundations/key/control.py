"""The answer key of the part `control` (instructor only: the student's copy holds none of it; grader.grading.key).

The update rules as a replay of recorded transitions (``replay``), the typical mistakes as replays with a wrong rule,
and the answers of the settings every correct implementation shares: the fork and the time-limited fork for each of
their few possible action outcomes, the random MDP with one action (no choice: the run is the environment's own).
"""
import numpy as np

from control_envs import RandomMDP

# key calls whose inputs are the student's own run (its episodes and transitions): on hidden inputs they are computed,
# never looked up among the recorded answers (grader.grading.key.AnswerKey)
FROM_THE_RUN = ("replay_answer", "replay_mistakes", "exploration_steps", "audit_run", "episode_sums",
                "returns_mistakes")
RULES = {"q_learning": "max", "sarsa": "next"}
WRONG = {"q_learning": ("цель строится по действию, которое агент сделал дальше (это SARSA), "
                        "а нужен max_b Q(s', b)", "next"),
         "sarsa": ("цель строится по жадному действию max_b Q(s', b) (это Q-learning), а нужно Q(s', a') "
                   "для действия a', которое агент сделает дальше", "max")}
FRESH = ("a' в цели — отдельный ε-жадный выбор, а на следующем шаге агент делает другой, новый: в SARSA цель строится "
         "по тому самому a', которое агент затем и сделает (выберите его один раз и перенесите на следующий шаг)")
CURRENT = ("в цели Q(s', a) взято текущее действие a, а нужно следующее a' — то, которое агент выберет ε-жадно в s' и "
           "сделает на следующем шаге")
TABLE_MAX = "max взят по всей таблице Q, а нужен максимум по действиям в s': max_b Q(s', b)"
TERMINAL_BOOTSTRAP = "после terminated всё равно бутстрапят Q следующего наблюдения: у конечного перехода будущего нет"
TERMINAL_SKIPPED = ("на последнем шаге (terminated) Q(s, a) не обновляется: цикл прерван до обновления, а цель там — "
                    "просто r")
NO_ALPHA = "шаг α не учтён: Q(s, a) = цель вместо Q(s, a) += α·(цель − Q(s, a))"
NO_GAMMA = "γ не используется в цели"
TRUNCATED_AS_TERMINAL = "truncated принят за конец задачи: после обрыва лимитом шагов бутстрап потерян"
BOTH_FLAGS = ("на шаге, где и terminated, и truncated, цель бутстрапит: truncated проверен раньше terminated, а у "
              "конечного перехода будущего нет и при обрыве (цель — просто r)")
DISCOUNTED = "в episode_returns отдача с дисконтом Σ γ^t·r_t, а нужна простая сумма наград"
NOT_RESET = "отдача не обнуляется в начале эпизода (копится через эпизоды)"


def _episodes(episodes):
    return [[(int(s), int(a), float(r), int(s2), bool(term), bool(trunc)) for s, a, r, s2, term, trunc in ep]
            for ep in episodes]


def replay(episodes, n_states, n_actions, alpha, gamma, rule, bootstrap_terminal=False, skip_terminal=False,
           truncated_terminal=False, both_bootstrap=False, before_step=None):
    """Q after applying `rule` to the recorded transitions in order: 'max' — Q-learning, 'next' — SARSA,
    'other' — SARSA whose target takes the other of two actions than the one taken next (a fresh draw of a'),
    'current' — SARSA whose target takes the current action a (Q(s', a)), 'table_max' — the max over the whole
    table instead of over s'. skip_terminal: no update on `terminated`;
    truncated_terminal: no bootstrap after `truncated` either; both_bootstrap: a step both terminated and truncated
    bootstraps (truncated read first). before_step(Q, i, step): called before each step's
    update with the Q the replay holds then (the i-th step of its episode)."""
    Q = np.zeros((n_states, n_actions))
    for episode in _episodes(episodes):
        for i, (s, a, r, s_next, terminated, truncated) in enumerate(episode):
            if before_step is not None:
                before_step(Q, i, episode[i])
            if terminated and skip_terminal:
                continue
            if (terminated and not bootstrap_terminal and not (truncated and both_bootstrap)) \
                    or (truncated and truncated_terminal):
                future = 0.0
            elif rule == "max" or (rule == "next" and n_actions == 1):
                future = Q[s_next].max()
            elif rule == "table_max":
                future = Q.max()
            elif rule == "current":
                future = Q[s_next, a]
            elif i + 1 < len(episode):  # SARSA: the action actually taken next in this episode (or the other one)
                future = Q[s_next, episode[i + 1][1] if rule == "next" else 1 - episode[i + 1][1]]
            else:
                future = 0.0
            Q[s, a] += alpha * (r + gamma * future - Q[s, a])
    return Q


def replay_answer(name, episodes, n_states, n_actions, alpha, gamma):
    """Q of `name` (q_learning or sarsa) after the recorded episodes."""
    return replay(episodes, n_states, n_actions, alpha, gamma, RULES[name])


def replay_mistakes(name, episodes, n_states, n_actions, alpha, gamma, truncation=False):
    """The typical mistakes' Q for these recorded episodes, named for the student (a mistake that gives the right
    answer here is left out). truncation: the episodes may end on `truncated`."""
    rule = RULES[name]
    right = replay(episodes, n_states, n_actions, alpha, gamma, rule)
    wrong_name, wrong_rule = WRONG[name]
    out = {wrong_name: replay(episodes, n_states, n_actions, alpha, gamma, wrong_rule)}
    if name == "sarsa" and n_actions == 2:
        out[FRESH] = replay(episodes, n_states, n_actions, alpha, gamma, "other")
    if name == "sarsa":
        out[CURRENT] = replay(episodes, n_states, n_actions, alpha, gamma, "current")
    if name == "q_learning":
        out[TABLE_MAX] = replay(episodes, n_states, n_actions, alpha, gamma, "table_max")
    out[TERMINAL_BOOTSTRAP] = replay(episodes, n_states, n_actions, alpha, gamma, rule, bootstrap_terminal=True)
    out[TERMINAL_SKIPPED] = replay(episodes, n_states, n_actions, alpha, gamma, rule, skip_terminal=True)
    out[NO_ALPHA] = replay(episodes, n_states, n_actions, 1.0, gamma, rule)
    out[NO_GAMMA] = replay(episodes, n_states, n_actions, alpha, 1.0, rule)
    if truncation:
        out[TRUNCATED_AS_TERMINAL] = replay(episodes, n_states, n_actions, alpha, gamma, rule,
                                            truncated_terminal=True)
    if any(t[4] and t[5] for ep in _episodes(episodes) for t in ep):
        out[BOTH_FLAGS] = replay(episodes, n_states, n_actions, alpha, gamma, rule, both_bootstrap=True)
    return {k: v for k, v in out.items() if not np.allclose(v, right, atol=1e-9, rtol=0)}


NEAR_TIE = 1e-9  # Q values closer than this (relative) but not equal: another correct order of floating-point
                 # operations may rank them the other way, so the greedy actions there are not known


def exploration_steps(name, episodes, n_states, n_actions, alpha, gamma, epsilon):
    """The choices of a recorded run of `name` as the audit of its exploration sees them, over the steps whose greedy
    actions the replay knows: {"actions" [n] (the action taken), "probs" [n, A] (its ε-greedy P(·)), "best" [n, A]
    (the mask of the greedy actions)}.

    The action of an episode's first step was chosen with the Q after every earlier update; the action of step i ≥ 1
    was chosen in s_i before the update of step i − 1 (SARSA: that update's target needs it; a Q-learning that draws
    its next action first) or after it (Q-learning as in its docstring): a step where the two orders give other
    greedy actions (s_i = s_{i−1} and the update changed the ranking) is left out, and so is one with a near tie
    (NEAR_TIE). Which steps are left out depends only on the history before the choice, so what remains is still a
    sequence of ε-greedy draws."""
    steps, previous, probs = [], {}, {}

    # a row of Q as Python floats: a run that wanders takes 10⁵ steps and more, and NumPy on a row of four costs
    # several times the Python (the same comparisons, the same IEEE arithmetic)
    def greedy(row):
        """The mask of the greedy actions of ``row`` (a tuple of bools), or None at a near tie."""
        top = max(row)
        floor = top - NEAR_TIE * (1.0 + abs(top))
        best = tuple(v == top for v in row)
        return best if best == tuple(v >= floor for v in row) else None

    def before_step(Q, i, step):
        s, a = step[0], step[1]
        row = Q[s].tolist()
        best = greedy(row)
        if i > 0 and previous["s"] == s:  # the update of step i − 1 touched this row: the other order's Q
            row[previous["a"]] = previous["value"]
            if best is None or best != greedy(row):
                best = None
        if best is not None:
            if best not in probs:  # P(·) depends on the greedy actions alone
                probs[best] = epsilon_greedy_probs(np.array(best, dtype=float), epsilon)
            steps.append((a, probs[best], best))
        previous.update(s=s, a=a, value=float(Q[s, a]))

    replay(episodes, n_states, n_actions, alpha, gamma, RULES[name], before_step=before_step)
    return {"actions": np.array([a for a, _, _ in steps], dtype=int),
            "probs": np.array([p for _, p, _ in steps]).reshape(-1, n_actions),
            "best": np.array([b for _, _, b in steps], dtype=bool).reshape(-1, n_actions)}


def from_table(transitions, lengths):
    """Episodes from a table of their transitions [n, 6] (s, a, r, s', terminated, truncated; episode after episode)
    and the episodes' lengths [E]: the compact form a check hands a long journal over in."""
    rows = np.asarray(transitions, dtype=float).reshape(-1, 6).tolist()
    ends = np.cumsum(np.asarray(lengths, dtype=int)).tolist()
    return [rows[start:end] for start, end in zip([0, *ends[:-1]], ends)]


def audit_run(name, transitions, lengths, n_states, n_actions, alpha, gamma, epsilon):
    """The key's side of the audit of one recorded run of `name` (transitions, lengths: see from_table): {"Q": Q by
    the rule, "returns": the episodes' sums of rewards, and the choices of exploration_steps}."""
    episodes = from_table(transitions, lengths)
    return {"Q": replay_answer(name, episodes, n_states, n_actions, alpha, gamma), "returns": episode_sums(episodes),
            **exploration_steps(name, episodes, n_states, n_actions, alpha, gamma, epsilon)}


def episode_sums(episodes):
    """episode_returns of the recorded episodes: the plain sum of each episode's rewards."""
    return np.array([sum(float(t[2]) for t in ep) for ep in episodes])


def returns_mistakes(episodes, gamma):
    sums = episode_sums(episodes)
    return {DISCOUNTED: np.array([sum(gamma ** i * float(t[2]) for i, t in enumerate(ep)) for ep in episodes]),
            NOT_RESET: np.cumsum(sums)}


# ---- the fork and the time-limited fork: every possible outcome of the agent's choices --------------------


def _fork_reward(b):
    return 2.0 if int(b) == 0 else -2.0


def fork_answers(name, alpha, gamma):
    """Two episodes on the fork (control_envs.Fork) for every outcome of the agent's choices: ``[b1][a][b2]`` ->
    {"expected": Q [3, 2], "mistakes": {name: Q}, "drawn": {name: Q}}; b1 — the action at the fork in episode 1,
    a — at the start in episode 2, b2 — at the fork in episode 2. "mistakes": a rule that gives its Q on every
    outcome (left out where it is the right one); "drawn": a mistake that hangs on a draw the journal never sees (a
    fresh a' in SARSA's target), its Q where that draw is not the action taken."""
    out = []
    for b1 in (0, 1):
        row = []
        for a in (0, 1):
            cell = []
            for b2 in (0, 1):
                episodes = [[(1, b1, _fork_reward(b1), 2, True, False)],
                            [(0, a, 0.0, 1, False, False), (1, b2, _fork_reward(b2), 2, True, False)]]
                mistakes = replay_mistakes(name, episodes, 3, 2, alpha, gamma)
                drawn = {FRESH: mistakes.pop(FRESH)} if FRESH in mistakes else {}
                cell.append({"expected": replay_answer(name, episodes, 3, 2, alpha, gamma), "mistakes": mistakes,
                             "drawn": drawn})
            row.append(cell)
        out.append(row)
    return out


def _time_limit_reward(b):
    return 2.0 if int(b) == 0 else 1.0


def terminal_step_answers(alpha):
    """One episode of one terminal step on the time-limited fork: ``[b]`` -> Q [2, 2] for the action b taken."""
    return [replay([[(1, b, _time_limit_reward(b), 0, True, False)]], 2, 2, alpha, 0.0, "max") for b in (0, 1)]


def time_limit_answers(alpha, gamma, name="q_learning"):
    """Three episodes of `name` on the time-limited fork at ε = 0 (control_envs.TimeLimitFork): ``[b1][a]`` ->
    {"expected": Q [2, 2], "mistakes": {name: Q}}; b1 — the action at the fork in episodes 1 and 3 (greedy in 3),
    a — at the start in episode 2 (cut by the time limit on arriving at the fork). SARSA's target there takes
    a' = b1 (greedy), so its answer is Q-learning's; its target from the current action a is a mistake of its own
    (where a ≠ b1 it gives what a lost bootstrap gives: Q(1, a) = 0)."""
    out = []
    for b1 in (0, 1):
        row = []
        for a in (0, 1):
            r = _time_limit_reward(b1)
            episodes = [[(1, b1, r, 0, True, False)], [(0, a, 0.0, 1, False, True)], [(1, b1, r, 0, True, False)]]
            row.append({"expected": replay(episodes, 2, 2, alpha, gamma, "max"),
                        "mistakes": {TRUNCATED_AS_TERMINAL: replay(episodes, 2, 2, alpha, gamma, "max",
                                                                   truncated_terminal=True),
                                     TERMINAL_BOOTSTRAP: replay(episodes, 2, 2, alpha, gamma, "max",
                                                                bootstrap_terminal=True)}})
            if name == "sarsa":
                row[-1]["mistakes"][CURRENT] = replay(episodes, 2, 2, alpha, gamma, "current")
        out.append(row)
    return out


# ---- the random MDP with one action: the run is the environment's own --------------------------------------


def one_action_episodes(env_seed, n_episodes, max_steps, both_flags=False):
    """The episodes every agent plays on RandomMDP(env_seed, n_actions=1, max_steps, both_flags) (its only action is
    0)."""
    env = RandomMDP(env_seed, n_actions=1, max_steps=max_steps, both_flags=both_flags)
    episodes = []
    for _ in range(n_episodes):
        s, _ = env.reset()
        episode, done = [], False
        while not done:
            s_next, r, terminated, truncated, _ = env.step(0)
            episode.append((int(s), 0, float(r), int(s_next), bool(terminated), bool(truncated)))
            s, done = s_next, terminated or truncated
        episodes.append(episode)
    return episodes


def one_action_run(name, env_seed, n_episodes, alpha, gamma, max_steps, both_flags=False):
    """What `name` returns on RandomMDP(env_seed, n_actions=1, max_steps, both_flags) after n_episodes, and the
    typical mistakes: {"Q", "returns", "episodes" (as (s, a, r, s', terminated, truncated)), "mistakes",
    "returns_mistakes"}."""
    episodes = one_action_episodes(env_seed, n_episodes, max_steps, both_flags)
    n_states = RandomMDP(env_seed, n_actions=1).observation_space.n
    return {"Q": replay_answer(name, episodes, n_states, 1, alpha, gamma),
            "returns": episode_sums(episodes),
            "episodes": [[list(t) for t in ep] for ep in episodes],
            "mistakes": replay_mistakes(name, episodes, n_states, 1, alpha, gamma, truncation=max_steps is not None),
            "returns_mistakes": returns_mistakes(episodes, gamma)}


# ---- ε-greedy ----------------------------------------------------------------------------------------------


def epsilon_greedy_probs(q_values, epsilon):
    """P(a) of ε-greedy: (1 − ε)/k + ε/A for each of the k best actions, ε/A for the others."""
    q = np.asarray(q_values, dtype=float)
    best = q == q.max()
    return np.where(best, (1 - epsilon) / best.sum(), 0.0) + epsilon / len(q)


def epsilon_greedy_mistakes(q_values, epsilon):
    q = np.asarray(q_values, dtype=float)
    best = q == q.max()
    k, n = int(best.sum()), len(q)
    out = {"ε — вероятность жадного действия, а не случайного": epsilon_greedy_probs(q, 1 - epsilon),
           "np.argmax всегда берёт первое из равных: при ничьей выбирайте равновероятно среди всех лучших действий":
               np.where(np.arange(n) == int(np.argmax(q)), 1 - epsilon, 0.0) + epsilon / n}
    # exploration among the actions other than the greedy one chosen (one of the k best, at random)
    out["случайное действие выбирается только среди НЕжадных"] = np.where(
        best, (1 - epsilon) / k + epsilon * (k - 1) / (k * (n - 1)), epsilon / (n - 1))
    right = epsilon_greedy_probs(q, epsilon)
    return {k: v for k, v in out.items() if not np.allclose(v, right, atol=1e-9, rtol=0)}
