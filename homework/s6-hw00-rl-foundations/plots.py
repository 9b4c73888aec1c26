"""Графики тетрадки (готовый код, дописывать не нужно): они рисуют то, что делают ваши функции.

Каждая функция получает ваши функции аргументами: `plots.gae_courier(gae)`. Графикам нужен matplotlib
(`python -m pip install matplotlib`); без него, как и пока функция не дописана, график печатает короткое
пояснение и ничего не ломает. Работает и вне тетрадки: `import plots` из папки с модулями.
"""
# The notebook's plots, declared in notebook.toml next to this file; provided code (no solution regions), so
# `python -m grader.authoring.build` copies it to homework/<hw>/plots.py, where the notebook's setup cell imports it.
# None of them raises: without matplotlib a plot prints how to install it; a function still left as TODO (or
# failing) prints a short note, and the notebook runs on. Text is Russian: students read it.
from __future__ import annotations

import contextlib
import inspect

import numpy as np

INSTALL_HINT = ("Для графиков нужен matplotlib, он не установлен. Установите его и перезапустите ядро:\n"
                "    python -m pip install matplotlib      "
                "(или из корня репозитория: python -m pip install -e \".[plots]\")\n"
                "В Jupyter можно прямо в ячейке: %pip install matplotlib")


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        print(INSTALL_HINT)
        return None
    return plt


@contextlib.contextmanager
def _drawing(what: str, plt):
    """Turn a failure while drawing into one printed line (and no half-drawn figure): the notebook goes on."""
    try:
        yield
    except BaseException as exc:
        plt.close("all")
        if isinstance(exc, KeyboardInterrupt):
            raise
        _explain_failure(what, exc)


def _explain_failure(what: str, exc: BaseException) -> None:
    if isinstance(exc, NotImplementedError):
        name = str(exc).replace("TODO:", "").strip()
        print(f"График «{what}» появится, когда вы допишете {name or 'функцию'}: сейчас там ещё TODO.")
    else:
        print(f"Не удалось построить график «{what}»: {type(exc).__name__}: {exc}")


def _show(plt, fig) -> None:
    fig.tight_layout()
    plt.show()


# ---- ppo: GAE of the courier robot for several λ ------------------------------------------------

COURIER = {"rewards": [1.0, 0.0, 2.0], "values": [2.0, 1.5, 1.0], "last_value": 0.0, "gamma": 0.9}


def gae_courier(gae, lambdas=(0.0, 0.5, 0.95, 1.0)) -> None:
    """Â_t робота-курьера (r = [1, 0, 2], V = [2, 1.5, 1], γ = 0.9) при разных λ: столбцы и кривые по λ."""
    plt = _pyplot()
    if plt is None:
        return
    with _drawing("GAE робота-курьера", plt):
        table = np.array([np.asarray(gae(**COURIER, lam=lam)[0], dtype=float) for lam in lambdas])
        grid = np.linspace(0.0, 1.0, 41)
        curves = np.array([np.asarray(gae(**COURIER, lam=lam)[0], dtype=float) for lam in grid])
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
        width = 0.8 / len(lambdas)
        steps = np.arange(table.shape[1])
        for i, (lam, row) in enumerate(zip(lambdas, table)):
            bars = left.bar(steps + (i - (len(lambdas) - 1) / 2) * width, row, width, label=f"λ = {lam:g}")
            left.bar_label(bars, fmt="%.3g", fontsize=7)
        left.axhline(0, color="black", linewidth=0.8)
        left.set_xticks(steps, [f"Â_{t}" for t in steps])
        left.set_title("Робот-курьер: преимущества GAE")
        left.legend(fontsize=8)
        for t in steps:
            right.plot(grid, curves[:, t], label=f"Â_{t}")
        right.axhline(0, color="black", linewidth=0.8)
        right.set_xlabel("λ  (0 — TD(0): Â = δ;   1 — Монте-Карло: Â = G − V)")
        right.set_title("Как Â_t зависит от λ")
        right.legend(fontsize=8)
        _show(plt, fig)


# ---- policy_gradient: the bandit's policy over time, with and without a baseline ---------------

def bandit_policy(reinforce_bandit, steps=2000, lr=0.01, seed=0, n_points=20) -> None:
    """π(a) трёхрукого бандита по ходу обучения REINFORCE без baseline и с ним.

    reinforce_bandit отдаёт только итоговую политику, поэтому кривая собирается из запусков с тем же
    seed и разным числом шагов: генератор с одним seed даёт ту же последовательность, так что запуск
    на k шагов — это начало запуска на steps шагов.
    """
    plt = _pyplot()
    if plt is None:
        return
    with _drawing("политика бандита", plt):
        ks = np.unique(np.linspace(1, steps, n_points).astype(int))
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharey=True)
        for ax, use_baseline in zip(axes, (False, True)):
            runs = [reinforce_bandit(use_baseline=use_baseline, seed=seed, steps=int(k), lr=lr) for k in ks]
            pis = np.array([np.asarray(pi, dtype=float) for pi, _ in runs])
            grad_var = float(runs[-1][1])
            for a in range(pis.shape[1]):
                ax.plot(ks, pis[:, a], label=f"π(рука {a})")
            ax.set_title(("с baseline" if use_baseline else "без baseline") + f": дисперсия градиента {grad_var:.3g}")
            ax.set_xlabel("шаг REINFORCE")
            ax.set_ylim(0, 1)
        axes[0].set_ylabel("вероятность действия")
        axes[0].legend(fontsize=8)
        _show(plt, fig)


# ---- control: Q-learning vs SARSA on the cliff ----------------------------------------------------

def cliff(q_learning, sarsa, make_env, n_episodes=500, seeds=(0, 1, 2), window=10) -> None:
    """Кривые обучения Q-learning и SARSA на «прогулке по обрыву» и их жадные пути (Саттон и Барто, 6.6)."""
    plt = _pyplot()
    if plt is None:
        return
    with _drawing("прогулка по обрыву", plt):
        algos = {"Q-learning": q_learning, "SARSA": sarsa}
        curves, paths = {}, {}
        env = make_env()
        for name, algo in algos.items():
            returns = []
            for seed in seeds:
                Q, episode_returns = algo(make_env(), n_episodes, seed=seed)
                returns.append(np.asarray(episode_returns, dtype=float))
                if seed == seeds[0]:
                    paths[name] = env.greedy_path(Q)
            curves[name] = np.mean(returns, axis=0)
        fig = plt.figure(figsize=(11, 6))
        top = fig.add_subplot(2, 1, 1)
        kernel = np.ones(window) / window
        for name, curve in curves.items():
            smooth = np.convolve(curve, kernel, mode="valid")
            top.plot(np.arange(len(smooth)) + window, smooth, label=name)
        top.set_ylim(-100, 0)
        top.set_xlabel("эпизод")
        top.set_ylabel("сумма наград за эпизод")
        top.set_title(f"Обучение (ε-жадное поведение, среднее по {len(seeds)} seed, скользящее окно {window})")
        top.legend()
        for i, (name, path) in enumerate(paths.items()):
            ax = fig.add_subplot(2, 2, 3 + i)
            _draw_cliff_path(ax, env, path)
            status = "дошёл до цели" if path["reached"] else "не дошёл до цели"
            ax.set_title(f"{name}: жадный путь, {len(path['actions'])} шагов, {status}", fontsize=10)
        _show(plt, fig)


def _draw_cliff_path(ax, env, path) -> None:
    rows, cols = env.shape
    board = np.zeros((rows, cols))
    board[np.asarray(env.cliff)] = 1.0
    ax.imshow(board, cmap="Reds", vmin=0, vmax=2.5)
    start = divmod(env.start_state, cols)
    goal = divmod(env.goal_state, cols)
    ax.text(start[1], start[0], "S", ha="center", va="center", fontweight="bold")
    ax.text(goal[1], goal[0], "G", ha="center", va="center", fontweight="bold")
    cells = [divmod(s, cols) for s in path["states"]]
    ax.plot([c for _, c in cells], [r for r, _ in cells], color="tab:blue", linewidth=2.5, marker="o", markersize=3)
    ax.set_xticks([])
    ax.set_yticks([])


# ---- dp: value tables of a grid world as heat maps ------------------------------------------------

def grid_values(solve_bellman, value_iteration, world, gamma=0.9) -> None:
    """Ценности мира-сетки тепловыми картами: V^π равномерно случайной политики (уравнение Беллмана)
    и V* с оптимальной политикой (value iteration) — рисунки 3.2 и 3.5 Саттона и Барто для сетки 5×5."""
    plt = _pyplot()
    if plt is None:
        return
    with _drawing("ценности мира-сетки", plt):
        P, R = world.to_mdp()
        S, A = R.shape
        uniform = np.full((S, A), 1.0 / A)
        v_random = np.asarray(solve_bellman(P, R, uniform, gamma), dtype=float)
        v_star, policy = value_iteration(P, R, gamma)
        v_star, policy = np.asarray(v_star, dtype=float), np.asarray(policy, dtype=float)
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
        panels = [(axes[0], v_random, None, f"V^π случайной политики (γ = {gamma:g})"),
                  (axes[1], v_star, policy, f"V* и все жадные по нему действия (γ = {gamma:g})")]
        for ax, values, pol, title in panels:
            table = np.full(world.shape, np.nan)
            for s, (r, c) in enumerate(world.cells):
                table[r, c] = values[s]
            image = ax.imshow(table, cmap="viridis")
            fig.colorbar(image, ax=ax, shrink=0.8)
            low, high = np.nanmin(table), np.nanmax(table)
            if pol is not None:  # every greedy action w.r.t. V*, as in the textbook's figure (ties included)
                q = R + gamma * P @ values
            for s, (r, c) in enumerate(world.cells):
                text = f"{values[s]:.1f}"
                if pol is not None:
                    best = np.flatnonzero(q[s] >= q[s].max() - 1e-6 * max(1.0, abs(q[s].max())))
                    text += "\n" + "".join("↑→↓←"[a] for a in best)
                bright = high > low and (values[s] - low) / (high - low) > 0.6
                ax.text(c, r, text, ha="center", va="center", color="black" if bright else "white", fontsize=8)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(title, fontsize=10)
        _show(plt, fig)


# ---- boss: the monitoring panels of a PPO run -----------------------------------------------------

def monitoring(history_or_train, **train_kwargs) -> None:
    """Панели мониторинга PPO, как просит урок: награда, энтропия, KL (к референсной модели и между
    старой и новой политикой) и clipfrac — по обновлениям.

    Аргумент — history (список словарей, который вернул train) или сама функция train: тогда она
    запускается здесь с train_kwargs (и без печати прогресса, если train умеет log_every).
    """
    plt = _pyplot()
    if plt is None:
        return
    with _drawing("панели мониторинга", plt):
        history = history_or_train
        if callable(history_or_train):
            if "log_every" in inspect.signature(history_or_train).parameters:
                train_kwargs.setdefault("log_every", 0)
            history = history_or_train(**train_kwargs)
        if not history:
            print("history пустая: train ничего не вернул.")
            return
        updates = np.arange(1, len(history) + 1)

        def series(key):
            return np.array([float(h[key]) for h in history])

        fig, axes = plt.subplots(1, 4, figsize=(14, 3.2))
        axes[0].plot(updates, series("score"), color="tab:green")
        axes[0].set_title("награда (средняя оценка ответа)")
        axes[1].plot(updates, series("entropy"), color="tab:purple")
        axes[1].set_title("энтропия политики")
        axes[2].plot(updates, series("kl_ref"), color="tab:blue")
        axes[2].set_ylabel("KL к референсной модели", color="tab:blue")
        twin = axes[2].twinx()  # approx KL between the old and the new policy is orders of magnitude smaller
        twin.plot(updates, series("approx_kl"), color="tab:orange")
        twin.set_ylabel("approx KL (старая → новая)", color="tab:orange")
        axes[2].set_title("KL")
        axes[3].plot(updates, series("clipfrac"), color="tab:red")
        axes[3].set_title("clipfrac (доля клиппинга)")
        for ax in axes:
            ax.set_xlabel("обновление")
        _show(plt, fig)


# ---- boss (bonus): what the KL costs — the exact frontier and the student's PPO ---------------------------

def kl_frontier(train, kl_optimal_policy, log_softmax, ppo_betas=(0.02, 0.1, 0.2, 0.3, 1.0), seed=0) -> None:
    """«Сколько стоит KL»: точная граница «оценка — KL» (оптимумы π* при разных β, перебором всех ответов
    toy_lm) и точки вашего PPO — итоговые политики train(beta=β, tables=...) при тех же β, тоже оценённые перебором.

    Граница строится вашей kl_optimal_policy (по каждому промпту, затем среднее по промптам), log π_ref и log π
    ответов — вашей log_softmax (toy_lm.answer_logp); SFT-модель — точка с KL = 0.
    """
    import toy_lm

    plt = _pyplot()
    if plt is None:
        return
    with _drawing("сколько стоит KL", plt):
        ref_logp = toy_lm.answer_logp(toy_lm.reference_theta(), log_softmax)  # [промпт, ответ]
        scores = toy_lm.answer_scores()

        def optimum(beta):  # (оценка, KL, J*) оптимума π*, среднее по промптам
            out = [kl_optimal_policy(ref_logp[p], scores[p], beta)[1:] for p in range(toy_lm.N_PROMPTS)]
            score, kl = (float(np.mean(x)) for x in zip(*out))
            return score, kl, score - beta * kl

        grid = np.exp(np.linspace(np.log(0.01), np.log(5.0), 60))
        curve = np.array([optimum(b)[:2] for b in grid])
        sft = toy_lm.exact_stats(toy_lm.reference_theta(), log_softmax)
        points = []
        for beta in ppo_betas:
            tables = {}
            kwargs = {"log_every": 0} if "log_every" in inspect.signature(train).parameters else {}
            train(seed=seed, beta=beta, tables=tables, **kwargs)
            if "theta" not in tables:
                print("train не положил итоговую таблицу в tables['theta']: точек PPO не будет (см. docstring train).")
                break
            stats = toy_lm.exact_stats(tables["theta"], log_softmax)
            points.append((beta, stats["score"], stats["kl_ref"], *optimum(beta)))
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
        ax.plot(curve[:, 1], curve[:, 0], color="tab:blue", label="оптимум π* ∝ π_ref·exp(r/β)")
        for beta, _, _, score_opt, kl_opt, _ in points:
            ax.plot(kl_opt, score_opt, "o", color="tab:blue")
            left = kl_opt > 0.3  # near KL = 0 the label goes to the right of its point, inside the axes
            ax.annotate(f"β = {beta:g}", (kl_opt, score_opt), textcoords="offset points",
                        xytext=(-8, 6) if left else (8, -3), ha="right" if left else "left", fontsize=8,
                        color="tab:blue")
        for _, score, kl, score_opt, kl_opt, _ in points:  # the gap: PPO and the optimum at the same β
            ax.plot([kl_opt, kl], [score_opt, score], ":", color="gray", linewidth=1)
        if points:
            ax.plot([p[2] for p in points], [p[1] for p in points], "s", color="tab:red",
                    label=f"ваш PPO: train(beta=β, seed={seed}), 40 обновлений")
        ax.plot(0.0, sft["score"], "*", color="black", markersize=12, label="SFT-модель π_ref (KL = 0)")
        ax.set_xlabel("KL(π ‖ π_ref) на ответ, нат")
        ax.set_ylabel("средняя оценка ответа")
        ax.set_title("Сколько стоит KL: оценка против расстояния до SFT-модели")
        ax.legend(loc="lower right", fontsize=8)
        ax.grid(alpha=0.3)
        _show(plt, fig)
        for beta, score, kl, score_opt, kl_opt, j_opt in points:
            j = score - beta * kl
            print(f"β = {beta:<5g} PPO: оценка {score:.3f}, KL {kl:.2f}, J = {j:.3f};  "
                  f"оптимум: оценка {score_opt:.3f}, KL {kl_opt:.2f}, J* = {j_opt:.3f};  J/J* = {j / j_opt:.2f}")
        print("Разрыв между точкой PPO и точкой оптимума с тем же β — недоработка оптимизатора (шум сэмплирования, "
              "40 обновлений, энтропийный бонус), а не цели: сама цель E[r] − β·KL при этом β не даёт лучше, чем π*.")
