"""The answer key of the part `dp` (instructor only: the student's copy holds none of it; grader.grading.key).

Oracles written differently from the reference: policy evaluation as a linear system over state–action pairs, V* as
the best of all deterministic policies (brute force) or Q-value iteration far past convergence; the replays of
typical mistakes; what the checks' inputs need to be free of near-ties.
"""
import itertools

import numpy as np

ARGMAX_PI = "вместо среднего по π взято одно действие — argmax π(·|s), первое из равных"
MIN_GAP = 0.01  # in the MDPs policy iteration is run on, the best action beats the next by at least this much


def oracle_evaluate(P, R, policy, gamma):
    """V^π through Q^π: solve (I − γ·M)·q = R over state–action pairs, M[(s,a),(s',a')] = P[s,a,s']·π(a'|s')."""
    P, R, policy = (np.asarray(x, dtype=float) for x in (P, R, policy))
    S, A = R.shape
    M = (P[:, :, :, None] * policy[None, None, :, :]).reshape(S * A, S * A)
    q = np.linalg.solve(np.eye(S * A) - gamma * M, R.reshape(-1)).reshape(S, A)
    return np.sum(policy * q, axis=1)


def oracle_v_star(P, R, gamma):
    """V* as the elementwise best of V^π over every deterministic policy (A^S of them)."""
    P, R = np.asarray(P, float), np.asarray(R, float)
    S, A = R.shape
    choices = np.array(list(itertools.product(range(A), repeat=S)))  # [A^S, S]
    P_pi = P[np.arange(S), choices]  # [A^S, S, S]
    r_pi = R[np.arange(S), choices]  # [A^S, S]
    V = np.linalg.solve(np.eye(S) - gamma * P_pi, r_pi[..., None])[..., 0]
    return V.max(axis=0)


def oracle_q(P, R, V, gamma):
    P, R, V = np.asarray(P, float), np.asarray(R, float), np.asarray(V, float)
    S, A = R.shape
    Q = np.empty((S, A))
    for s in range(S):
        for a in range(A):
            Q[s, a] = R[s, a] + gamma * sum(P[s, a, t] * V[t] for t in range(S))
    return Q


def q_star(P, R, gamma):
    """Q* of a small MDP (V* by brute force)."""
    return oracle_q(P, R, oracle_v_star(P, R, gamma), gamma)


def oracle_v_star_large(P, R, gamma, sweeps=3000):
    """V* of a larger MDP: Q-value iteration over state–action pairs, far past convergence."""
    P, R = np.asarray(P, float), np.asarray(R, float)
    Q = np.zeros_like(R)
    for _ in range(sweeps):
        Q = R + gamma * np.einsum("sat,t->sa", P, Q.max(axis=1))
    return Q.max(axis=1)


def q_star_large(P, R, gamma):
    return oracle_q(P, R, oracle_v_star_large(P, R, gamma), gamma)


def near_tie(P, R, gamma):
    """Whether the optimal actions of a small MDP are ambiguous: in some state the best action beats the next by less
    than MIN_GAP (an absorbing state, whose actions all have exactly the same Q*, is no near-tie)."""
    Q = np.sort(q_star(P, R, gamma), axis=1)
    gaps = Q[:, -1] - Q[:, -2]
    return bool(np.any((gaps < MIN_GAP) & (Q[:, -1] != Q[:, 0])))


def greedy_mask(Q_star):
    """[S, A] mask of the actions that maximize Q* (within 1e-6·max(1, |max Q*|): the checks' tolerance)."""
    Q = np.asarray(Q_star, float)
    return Q >= Q.max(axis=1, keepdims=True) - 1e-6 * np.maximum(1.0, np.abs(Q).max(axis=1, keepdims=True))


def reward_greedy(R):
    """[S, A] mask of the actions that are best by the reward alone (the mistake "greedy by R, without γ·P·V")."""
    R = np.asarray(R, float)
    return R >= R.max(axis=1, keepdims=True) - 1e-9


def single_state_losses(P, R, gamma):
    """[S, A]: how much the optimal policy loses (the largest drop of its value over the states) when in state s alone
    it takes action a instead; 0 for its own actions (and for any action of an absorbing state)."""
    P, R = np.asarray(P, float), np.asarray(R, float)
    S, A = R.shape
    V = oracle_v_star(P, R, gamma)
    best = np.argmax(oracle_q(P, R, V, gamma), axis=1)
    losses = np.zeros((S, A))
    for s in range(S):
        for a in range(A):
            policy = np.eye(A)[best]
            policy[s] = np.eye(A)[a]
            losses[s, a] = max(0.0, float(np.max(V - oracle_evaluate(P, R, policy, gamma))))
    return losses


def argmax_policy_values(P, R, policy, gamma):
    """V of the deterministic policy that takes argmax_a π(a|s) (the first of equals) in every state."""
    S = P.shape[0]
    act = np.asarray(policy).argmax(axis=1)
    return np.linalg.solve(np.eye(S) - gamma * P[np.arange(S), act], R[np.arange(S), act])


def evaluation_mistakes(P, R, policy, gamma):
    """What typical wrong evaluations return."""
    P, R, policy = (np.asarray(x, dtype=float) for x in (P, R, policy))
    P_pi = np.einsum("sa,sat->st", policy, P)
    r_pi = np.sum(policy * R, axis=1)
    S = len(r_pi)
    out = {"взят max по действиям, а не среднее по π (получилась V*, а не V^π)": oracle_v_star(P, R, gamma)
           if R.shape[0] <= 8 else None,
           "P_π транспонирована: (I − γP_πᵀ)V = r_π (Σ_s P_π[s, s']·V(s) вместо Σ_{s'} P_π[s, s']·V(s'): "
           "сумма не по той оси)":
               np.linalg.solve(np.eye(S) - gamma * P_pi.T, r_pi),
           "награды не взвешены по π: r_π взято как среднее R по действиям":
               np.linalg.solve(np.eye(S) - gamma * P_pi, R.mean(axis=1)),
           "γ умножает и награду: (I − γP_π)V = γ·r_π, а нужно r_π":
               gamma * np.linalg.solve(np.eye(S) - gamma * P_pi, r_pi),
           ARGMAX_PI: argmax_policy_values(P, R, policy, gamma)}
    return {k: v for k, v in out.items() if v is not None}


def q_mistakes(P, R, V, gamma):
    """What typical wrong q_from_v return."""
    P, R, V = (np.asarray(x, dtype=float) for x in (P, R, V))
    return {"сумма по оси s, а не s'": R + gamma * np.einsum("sat,s->sa", P, V), "γ не учтён": R + P @ V,
            "γ умножает и награду: γ·(R + P·V), а нужно R + γ·P·V": gamma * (R + P @ V)}


def q_truncated(P, R, V, gamma):
    """Q with every entry rounded toward zero (an integer array made after an integer R)."""
    return np.trunc(oracle_q(P, R, V, gamma))
