"""A deliberately plain, loop-heavy but correct solution of the part `dp` (a kit test variant, not the reference).

Written the way a student who knows Python better than NumPy would: the arrays are turned into nested lists,
every Bellman backup is three nested loops over s, a and s', and the linear system is solved by Gaussian
elimination written out by hand. NumPy is used only to read the inputs and to build the returned arrays.
"""
import numpy as np

TIE_TOL = 1e-8
SUM_TOL = 1e-6


def _to_lists(P, R, policy=None, V=None):
    """Checks the shapes and the probabilities; returns P, R, policy, V as nested Python lists of floats."""
    P_arr = np.asarray(P, dtype=float)
    R_arr = np.asarray(R, dtype=float)
    if P_arr.ndim != 3:
        raise ValueError("P must have the shape [S, A, S], got " + str(P_arr.shape))
    S, A, S2 = P_arr.shape
    if S2 != S:
        raise ValueError("P must have the shape [S, A, S], got " + str(P_arr.shape))
    if R_arr.shape != (S, A):
        raise ValueError("R must have the shape " + str((S, A)) + ", got " + str(R_arr.shape))
    P_list = P_arr.tolist()
    R_list = R_arr.tolist()
    for s in range(S):
        for a in range(A):
            total = 0.0
            for s2 in range(S):
                if P_list[s][a][s2] < 0:
                    raise ValueError("P[%d, %d] has a negative probability" % (s, a))
                total += P_list[s][a][s2]
            if abs(total - 1.0) > SUM_TOL:
                raise ValueError("P[%d, %d] sums to %g, not 1" % (s, a, total))
    pi_list = None
    if policy is not None:
        pi_arr = np.asarray(policy, dtype=float)
        if pi_arr.shape != (S, A):
            raise ValueError("policy must have the shape " + str((S, A)) + ", got " + str(pi_arr.shape))
        pi_list = pi_arr.tolist()
        for s in range(S):
            total = 0.0
            for a in range(A):
                if pi_list[s][a] < 0:
                    raise ValueError("policy[%d] has a negative probability" % s)
                total += pi_list[s][a]
            if abs(total - 1.0) > SUM_TOL:
                raise ValueError("policy[%d] sums to %g, not 1" % (s, total))
    V_list = None
    if V is not None:
        V_arr = np.asarray(V, dtype=float)
        if V_arr.shape != (S,):
            raise ValueError("V must have the shape " + str((S,)) + ", got " + str(V_arr.shape))
        V_list = V_arr.tolist()
    return P_list, R_list, pi_list, V_list


def _backup(P, R, V, gamma, s, a):
    """Q(s, a) = R[s][a] + gamma * sum over s' of P[s][a][s'] * V[s']."""
    total = 0.0
    for s2 in range(len(V)):
        total += P[s][a][s2] * V[s2]
    return R[s][a] + gamma * total


def _all_q(P, R, V, gamma):
    S = len(P)
    A = len(P[0])
    Q = []
    for s in range(S):
        row = []
        for a in range(A):
            row.append(_backup(P, R, V, gamma, s, a))
        Q.append(row)
    return Q


def _greedy(Q):
    """One-hot greedy policy: the lowest action whose Q is within the tie tolerance of the maximum."""
    policy = []
    for s in range(len(Q)):
        best = Q[s][0]
        for a in range(1, len(Q[s])):
            if Q[s][a] > best:
                best = Q[s][a]
        threshold = best - TIE_TOL * max(1.0, abs(best))
        chosen = 0
        for a in range(len(Q[s])):
            if Q[s][a] >= threshold:
                chosen = a
                break
        row = [0.0] * len(Q[s])
        row[chosen] = 1.0
        policy.append(row)
    return policy


def _solve(P, R, policy, gamma):
    S = len(P)
    A = len(P[0])
    # the augmented matrix [I - gamma * P_pi | r_pi]
    M = []
    for s in range(S):
        row = []
        for s2 in range(S):
            p_pi = 0.0
            for a in range(A):
                p_pi += policy[s][a] * P[s][a][s2]
            row.append((1.0 if s == s2 else 0.0) - gamma * p_pi)
        r_pi = 0.0
        for a in range(A):
            r_pi += policy[s][a] * R[s][a]
        row.append(r_pi)
        M.append(row)
    # Gaussian elimination with partial pivoting
    for col in range(S):
        pivot = col
        for r in range(col + 1, S):
            if abs(M[r][col]) > abs(M[pivot][col]):
                pivot = r
        if abs(M[pivot][col]) < 1e-12:
            raise ValueError("the system (I - gamma * P_pi) V = r_pi is singular (gamma = 1 in an episodic task?): "
                             "use policy_evaluation")
        M[col], M[pivot] = M[pivot], M[col]
        for r in range(col + 1, S):
            factor = M[r][col] / M[col][col]
            if factor != 0.0:
                for c in range(col, S + 1):
                    M[r][c] -= factor * M[col][c]
    V = [0.0] * S
    for r in range(S - 1, -1, -1):
        total = M[r][S]
        for c in range(r + 1, S):
            total -= M[r][c] * V[c]
        V[r] = total / M[r][r]
    return V


def _evaluate(P, R, policy, gamma, tol):
    S = len(P)
    A = len(P[0])
    V = [0.0] * S
    while True:
        new_V = []
        for s in range(S):
            value = 0.0
            for a in range(A):
                if policy[s][a] != 0.0:
                    value += policy[s][a] * _backup(P, R, V, gamma, s, a)
            new_V.append(value)
        delta = 0.0
        for s in range(S):
            if abs(new_V[s] - V[s]) > delta:
                delta = abs(new_V[s] - V[s])
        V = new_V
        if delta < tol:
            return V


def solve_bellman(P, R, policy, gamma):
    P, R, policy, _ = _to_lists(P, R, policy)
    return np.array(_solve(P, R, policy, float(gamma)))


def policy_evaluation(P, R, policy, gamma, tol=1e-10):
    P, R, policy, _ = _to_lists(P, R, policy)
    return np.array(_evaluate(P, R, policy, float(gamma), tol))


def q_from_v(P, R, V, gamma):
    P, R, _, V = _to_lists(P, R, V=V)
    return np.array(_all_q(P, R, V, float(gamma)))


def value_iteration(P, R, gamma, tol=1e-10):
    P, R, _, _ = _to_lists(P, R)
    gamma = float(gamma)
    S = len(P)
    A = len(P[0])
    V = [0.0] * S
    while True:
        new_V = []
        for s in range(S):
            best = None
            for a in range(A):
                q = _backup(P, R, V, gamma, s, a)
                if best is None or q > best:
                    best = q
            new_V.append(best)
        delta = 0.0
        for s in range(S):
            if abs(new_V[s] - V[s]) > delta:
                delta = abs(new_V[s] - V[s])
        V = new_V
        if delta < tol:
            break
    policy = _greedy(_all_q(P, R, V, gamma))
    return np.array(V), np.array(policy)


def policy_iteration(P, R, gamma):
    P, R, _, _ = _to_lists(P, R)
    gamma = float(gamma)
    S = len(P)
    A = len(P[0])
    policy = []
    for _s in range(S):
        policy.append([1.0 / A] * A)
    while True:
        if gamma < 1:
            V = _solve(P, R, policy, gamma)
        else:
            V = _evaluate(P, R, policy, gamma, 1e-10)
        new_policy = _greedy(_all_q(P, R, V, gamma))
        if new_policy == policy:
            return np.array(V), np.array(policy)
        policy = new_policy
