"""The answer key of the part `mc_td` (instructor only: the student's copy holds none of it; grader.grading.key).

Oracles written differently from the reference (returns as an explicit sum of discounted rewards, Monte Carlo as
lists of returns per state, TD(0) over the flattened batch, batch TD(0) against the certainty-equivalence estimate
of the textbook) and the replays of the typical mistakes that the checks name.
"""
import numpy as np

# ---- oracles -----------------------------------------------------------------------------------------


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


# ---- the typical mistakes ------------------------------------------------------------------------------


def returns_mistakes(rewards, gamma):
    """What the typical wrong discounted_returns give for these rewards."""
    r = np.asarray(rewards, dtype=float)
    T = len(r)
    right = returns_oracle(r, gamma)
    return {"отдача накоплена с начала эпизода (G_t = r_t + γ·G_{t−1}), а нужно с конца": np.array(
                [sum(gamma ** (t - k) * r[k] for k in range(t + 1)) for t in range(T)]),
            "отдачи в обратном порядке (посчитаны с конца, но не развёрнуты)": right[::-1],
            "γ в степени номера шага от начала эпизода (γ^k вместо γ^(k−t))": np.array(
                [sum(gamma ** k * r[k] for k in range(t, T)) for t in range(T)]),
            "γ не учтён": returns_oracle(r, 1.0)}


def mc_variant(episodes, n_states, gamma, *, visit="first", returns="ok", step="average", alpha=None):
    """What a Monte Carlo implementation returns, right or with one typical mistake (the mistakes' catalogue).

    visit: "first", "every", "last" (the last visit of a state in an episode), "first_ever" (the set of visited
    states is kept across episodes); returns: "ok", "forward" (accumulated from the episode's start),
    "undiscounted", "rewards" (r_t instead of G_t); step: "average", "alpha", "alpha_over_count".
    """
    V, counts = np.zeros(n_states), np.zeros(n_states)
    ever = set()
    for episode in episodes:
        r = [tr[1] for tr in episode]
        if returns == "forward":
            G = np.array([sum(gamma ** (t - k) * r[k] for k in range(t + 1)) for t in range(len(r))])
        elif returns == "rewards":
            G = np.array(r, dtype=float)
        else:
            G = returns_oracle(r, 1.0 if returns == "undiscounted" else gamma)
        states = [tr[0] for tr in episode]
        if visit == "every":
            counted = range(len(states))
        elif visit == "last":
            counted = [t for t in range(len(states)) if t == len(states) - 1 - states[::-1].index(states[t])]
        elif visit == "first_ever":
            counted = []
            for t, s in enumerate(states):
                if s not in ever:
                    ever.add(s)
                    counted.append(t)
        else:
            counted = [t for t in range(len(states)) if states.index(states[t]) == t]
        for t in counted:
            s = states[t]
            counts[s] += 1
            rate = {"average": 1 / counts[s], "alpha": alpha, "alpha_over_count": (alpha or 0) / counts[s]}[step]
            V[s] += rate * (G[t] - V[s])
    return V


def mc_mistakes(episodes, n_states, gamma, first_visit=True, alpha=None):
    """The typical mistakes' answers for these arguments, named for the student."""
    step = "average" if alpha is None else "alpha"
    visit = "first" if first_visit else "every"
    out = {}
    if first_visit:
        out["every-visit вместо first-visit"] = mc_variant(
            episodes, n_states, gamma, visit="every", step=step, alpha=alpha)
        out["учтено последнее посещение состояния в эпизоде, а не первое"] = mc_variant(
            episodes, n_states, gamma, visit="last", step=step, alpha=alpha)
        out["посещения запоминаются через все эпизоды (множество посещённых не обнуляется в начале эпизода)"] = \
            mc_variant(episodes, n_states, gamma, visit="first_ever", step=step, alpha=alpha)
    else:
        out["first-visit вместо every-visit"] = mc_variant(
            episodes, n_states, gamma, visit="first", step=step, alpha=alpha)
    if alpha is not None:
        out["alpha проигнорирован: выборочные средние"] = mc_variant(episodes, n_states, gamma, visit=visit)
        out["шаг α поделён на число посещений N(s): с заданным alpha шаг постоянный, счётчик посещений не нужен"] = \
            mc_variant(episodes, n_states, gamma, visit=visit, step="alpha_over_count", alpha=alpha)
    out["отдачи накоплены с начала эпизода (G_t = r_t + γ·G_{t−1}), а нужно с конца"] = mc_variant(
        episodes, n_states, gamma, visit=visit, returns="forward", step=step, alpha=alpha)
    out["отдачи без дисконта (γ = 1)"] = mc_variant(episodes, n_states, gamma, visit=visit, returns="undiscounted",
                                                     step=step, alpha=alpha)
    out["в V усреднены награды r_t, а не отдачи G_t"] = mc_variant(episodes, n_states, gamma, visit=visit,
                                                                     returns="rewards", step=step, alpha=alpha)
    return out


def td0_variant(episodes, n_states, alpha, gamma, V0=None, n_epochs=1, *, mistake=None):
    """TD(0), right (mistake=None) or with one typical mistake (the codes of TD_MISTAKES in the test file)."""
    V = np.zeros(n_states) if V0 is None or mistake == "V0" else np.array(V0, dtype=float)
    epochs = 1 if mistake == "epochs" else n_epochs
    order = [ep for ep in episodes for _ in range(epochs)] if mistake == "epochs_per_episode" else \
        [ep for _ in range(epochs) for ep in episodes]
    for episode in order:
        before = V.copy()
        steps = list(enumerate(episode))
        for t, (s, r, s_next, terminated) in (reversed(steps) if mistake == "backwards" else steps):
            end = terminated or (mistake == "truncated" and t == len(episode) - 1)
            if mistake == "skip_terminal" and terminated:
                continue
            source = before if mistake == "offline" else V
            nxt = s if mistake == "current_state" else s_next
            future = source[nxt] if (not end or mistake == "no_mask") else 0.0
            delta = r + (1.0 if mistake == "no_gamma" else gamma) * future - source[s]
            V[s] += (-alpha if mistake == "sign" else alpha) * delta
    return V


TD_CODES = ["no_mask", "truncated", "current_state", "no_gamma", "offline", "backwards", "sign", "skip_terminal",
            "V0", "epochs", "epochs_per_episode"]


def td_mistakes(episodes, n_states, alpha, gamma, V0=None, n_epochs=1, only=None):
    """The typical TD(0) mistakes' answers for these arguments (those that change the answer), by the mistake's
    code (the test file names them for the student)."""
    codes = only or [m for m in TD_CODES if (m != "V0" or V0 is not None) and
                     (m not in ("epochs", "epochs_per_episode") or n_epochs > 1)]
    return {m: td0_variant(episodes, n_states, alpha, gamma, V0, n_epochs, mistake=m) for m in codes}
