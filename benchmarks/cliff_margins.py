"""How likely a correct solution is to fail the cliff checks of the part `control` (an analysis, not a test).

    python benchmarks/cliff_margins.py [--runs 10000] [--episodes 300] [--draws 8000000]

A correct q_learning or sarsa may draw its random numbers in another order than the reference (the homework does
not prescribe it), so on the checks' fixed seeds each of its runs is a random draw. This script plays ``--runs``
runs of each algorithm with an independent, fast implementation (ε-greedy with random ties, the rules of the
lesson; its own random streams), and prints, for the rules of tests/<hw>/test_control.py:

- the greedy-path rules (Q-learning: the 13-step edge path on at least 1 of 3 seeds; SARSA: at most 4 cells at
  the edge on at least 3 of 5 seeds): the failures of one run, counted, their 95% upper bound, and the binomial
  chance that a check fails;
- the online-returns rule (mean return over episodes 51–N; SARSA: the mean over 5 seeds without the 2 lowest > −46;
  Q-learning: the mean over 3 seeds without the highest < −35; SARSA above Q-learning): ``--draws`` random sets of
  seeds resampled from the runs, how many crossed a threshold, and the 1e-6 quantiles.

10 000 runs of 300 episodes of each take about 10 minutes on one core; the checks' 200 episodes, 3 000 runs:
about 150 s on one core (84 CPU-s on 2026-12-04).

``--q-seeds``, ``--sarsa-seeds``, ``--sarsa-off-edge``, ``--sarsa-drop``, ``--q-drop`` try other rules (fewer
runs): ``--q-seeds 2 --sarsa-seeds 4 --sarsa-off-edge 2`` is a check of 6 runs in place of 8.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))
EDGE = set(range(25, 35))  # row 2, columns 1–10
START, GOAL = 36, 47


def step(s: int, a: int) -> tuple[int, float, bool]:
    row, col = divmod(s, 12)
    d_row, d_col = MOVES[a]
    row, col = min(max(row + d_row, 0), 3), min(max(col + d_col, 0), 11)
    if row == 3 and 1 <= col <= 10:
        return START, -100.0, False
    return row * 12 + col, -1.0, row * 12 + col == GOAL


def greedy_path(Q) -> tuple[list[int], float, bool]:
    s, states, total = START, [START], 0.0
    for _ in range(100):
        q = Q[s]
        s, r, terminated = step(s, q.index(max(q)))
        total += r
        states.append(s)
        if terminated:
            return states, total, True
        if states.count(s) > 1:
            return states, total, False
    return states, total, False


def run(algorithm: str, seed: int, episodes: int, from_episode: int, epsilon=0.1, alpha=0.5):
    """One run: (greedy path is the edge path, cells at the edge, reached the goal, mean return from_episode–)."""
    rng = np.random.default_rng(seed)
    pool, used = rng.random(1 << 16).tolist(), 0

    def uniform() -> float:
        nonlocal pool, used
        if used == len(pool):
            pool, used = rng.random(1 << 16).tolist(), 0
        used += 1
        return pool[used - 1]

    def act(q) -> int:
        if uniform() < epsilon:
            return int(uniform() * 4)
        best = [k for k in range(4) if q[k] == max(q)]
        return best[int(uniform() * len(best))]

    Q = [[0.0] * 4 for _ in range(48)]
    returns = []
    for _ in range(episodes):
        s, total = START, 0.0
        a = act(Q[s])
        while True:
            if algorithm == "q_learning":
                a = act(Q[s])
            s_next, r, terminated = step(s, a)
            total += r
            if terminated:
                target = r
            elif algorithm == "q_learning":
                target = r + max(Q[s_next])
            else:
                a_next = act(Q[s_next])
                target = r + Q[s_next][a_next]
            Q[s][a] += alpha * (target - Q[s][a])
            if terminated:
                break
            s = s_next
            if algorithm == "sarsa":
                a = a_next
        returns.append(total)
    states, total, reached = greedy_path(Q)
    edge_path = reached and total == -13 and len(states) == 14
    return edge_path, sum(x in EDGE for x in states), reached, float(np.mean(returns[from_episode - 1:]))


def upper95(failures: int, n: int) -> float:
    """Clopper–Pearson 95% upper bound of a probability seen ``failures`` times in ``n`` (bisection)."""
    lo, hi = failures / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        below = sum(math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                             + k * math.log(mid) + (n - k) * math.log1p(-mid)) for k in range(failures + 1))
        lo, hi = (mid, hi) if below > 0.05 else (lo, mid)
    return hi


def at_least(k: int, n: int, p: float) -> float:
    """P(at least k of n independent events of probability p)."""
    return sum(math.comb(n, j) * p ** j * (1 - p) ** (n - j) for j in range(k, n + 1))


def trimmed(samples: np.ndarray, k: int, drop_low: int, drop_high: int, draws: int, rng) -> np.ndarray:
    out, chunk = [], 500_000
    for start in range(0, draws, chunk):
        picked = np.sort(samples[rng.integers(len(samples), size=(min(chunk, draws - start), k))], axis=1)
        out.append(picked[:, drop_low:k - drop_high].mean(axis=1))
    return np.concatenate(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10_000)
    p.add_argument("--episodes", type=int, default=200)
    p.add_argument("--from-episode", type=int, default=51)
    p.add_argument("--draws", type=int, default=8_000_000)
    p.add_argument("--q-seeds", type=int, default=3, help="Q-learning's seeds (the edge path on at least one)")
    p.add_argument("--sarsa-seeds", type=int, default=5)
    p.add_argument("--sarsa-off-edge", type=int, default=3, help="SARSA's seeds with at most 4 cells at the edge")
    p.add_argument("--sarsa-drop", type=int, default=2, help="SARSA's lowest seeds left out of its mean")
    p.add_argument("--q-drop", type=int, default=1, help="Q-learning's highest seeds left out of its mean")
    args = p.parse_args(argv)
    kq, ks = args.q_seeds, args.sarsa_seeds
    started = time.perf_counter()
    results = {}
    for algorithm in ("q_learning", "sarsa"):
        results[algorithm] = [run(algorithm, 10_000 + seed, args.episodes, args.from_episode)
                              for seed in range(args.runs)]
        print(f"{algorithm}: {args.runs} runs of {args.episodes} episodes "
              f"({time.perf_counter() - started:.0f} s so far)", flush=True)
    n = args.runs
    q_bad = sum(not r[0] for r in results["q_learning"])
    s_edge = sum(r[1] > 4 for r in results["sarsa"])
    print("\ngreedy paths (one run: failures, 95% upper bound -> chance the check fails):")
    for label, bad, k, m in ((f"Q-learning not the edge path; check: {kq} of {kq}", q_bad, kq, kq),
                             (f"SARSA > 4 cells at the edge; check: > {ks - args.sarsa_off_edge} of {ks}", s_edge,
                              ks - args.sarsa_off_edge + 1, ks)):
        bound = upper95(bad, n)
        print(f"  {label}: {bad}/{n}, p ≤ {bound:.2e} -> {at_least(k, m, bound):.1e}")
    rng = np.random.default_rng(0)
    sarsa = trimmed(np.array([r[3] for r in results["sarsa"]]), ks, args.sarsa_drop, 0, args.draws, rng)
    q_learning = trimmed(np.array([r[3] for r in results["q_learning"]]), kq, 0, args.q_drop, args.draws, rng)
    print(f"\nonline returns, episodes {args.from_episode}–{args.episodes} ({args.draws} resampled sets of seeds):")
    print(f"  SARSA ({ks} seeds without the {args.sarsa_drop} lowest) ≤ −46: {int(np.sum(sarsa <= -46))}; "
          f"1e-6 quantile {np.quantile(sarsa, 1e-6):.1f}, median {np.median(sarsa):.1f}")
    print(f"  Q-learning ({kq} seeds without the {args.q_drop} highest) ≥ −35: {int(np.sum(q_learning >= -35))}; "
          f"1 − 1e-6 quantile {np.quantile(q_learning, 1 - 1e-6):.1f}, median {np.median(q_learning):.1f}")
    print(f"  SARSA not above Q-learning: {int(np.sum(sarsa <= q_learning))}; "
          f"1e-6 quantile of the difference {np.quantile(sarsa - q_learning, 1e-6):.1f}")
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
