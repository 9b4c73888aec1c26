"""A deliberately plain, loop-heavy but correct solution of the part `ppo` (a kit test variant, not the reference).

Written the way a student who knows Python better than NumPy would: TD errors and GAE by explicit loops over
time (GAE backwards, one column at a time for a [T, N] batch), means and standard deviations by running sums,
the clipped objective and the losses element by element. NumPy is used only to read the inputs and to build
the returned arrays.
"""
import math

import numpy as np


def _floats(x):
    return [float(v) for v in np.asarray(x, dtype=float).ravel().tolist()]


def td_errors(rewards, values, last_value, gamma):
    r = _floats(rewards)
    v = _floats(values)
    gamma = float(gamma)
    deltas = []
    for t in range(len(r)):
        if t + 1 < len(v):
            next_v = v[t + 1]
        else:
            next_v = float(last_value)
        deltas.append(r[t] + gamma * next_v - v[t])
    return np.array(deltas)


def gae(rewards, values, last_value, gamma, lam):
    deltas = td_errors(rewards, values, last_value, gamma).tolist()
    v = _floats(values)
    factor = float(gamma) * float(lam)
    adv = [0.0] * len(deltas)
    running = 0.0
    for t in range(len(deltas) - 1, -1, -1):
        running = deltas[t] + factor * running
        adv[t] = running
    returns = []
    for t in range(len(adv)):
        returns.append(adv[t] + v[t])
    return np.array(adv), np.array(returns)


def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    new = _floats(logp_new)
    old = _floats(logp_old)
    A = _floats(adv)
    total = 0.0
    for i in range(len(A)):
        ratio = math.exp(new[i] - old[i])
        clipped = ratio
        if clipped < 1 - eps:
            clipped = 1 - eps
        if clipped > 1 + eps:
            clipped = 1 + eps
        total += min(ratio * A[i], clipped * A[i])
    return total / len(A)


def normalize_advantages(adv, eps=1e-8):
    arr = np.asarray(adv, dtype=float)
    flat = _floats(arr)
    mean = 0.0
    for x in flat:
        mean += x
    mean /= len(flat)
    var = 0.0
    for x in flat:
        var += (x - mean) ** 2
    std = math.sqrt(var / len(flat))
    out = []
    for x in flat:
        out.append((x - mean) / (std + eps))
    return np.array(out).reshape(arr.shape)


def ppo_loss(logp_new, logp_old, adv, values_pred, returns, entropy, eps=0.2, c_v=0.5, c_e=0.01):
    objective = ppo_clip_objective(logp_new, logp_old, adv, eps)
    v = _floats(values_pred)
    R = _floats(returns)
    H = _floats(entropy)
    value_err = 0.0
    for i in range(len(v)):
        value_err += (v[i] - R[i]) ** 2
    value_err /= len(v)
    mean_entropy = 0.0
    for h in H:
        mean_entropy += h
    mean_entropy /= len(H)
    return float(-objective + c_v * value_err - c_e * mean_entropy)


def gae_with_boundaries(rewards, values, next_values, terminated, truncated, gamma, lam):
    r = np.asarray(rewards, dtype=float)
    shape = r.shape
    T = shape[0]
    N = 1 if r.ndim == 1 else shape[1]
    r = r.reshape(T, N).tolist()
    v = np.asarray(values, dtype=float).reshape(T, N).tolist()
    nv = np.asarray(next_values, dtype=float).reshape(T, N).tolist()
    term = np.asarray(terminated).reshape(T, N).tolist()
    trunc = np.asarray(truncated).reshape(T, N).tolist()
    gamma = float(gamma)
    lam = float(lam)
    adv = []
    for _t in range(T):
        adv.append([0.0] * N)
    for n in range(N):
        running = 0.0
        for t in range(T - 1, -1, -1):
            ended = bool(term[t][n])
            cut = ended or bool(trunc[t][n])
            if ended:
                delta = r[t][n] - v[t][n]
            else:
                delta = r[t][n] + gamma * nv[t][n] - v[t][n]
            if cut:
                running = delta
            else:
                running = delta + gamma * lam * running
            adv[t][n] = running
    ret = []
    for t in range(T):
        row = []
        for n in range(N):
            row.append(adv[t][n] + v[t][n])
        ret.append(row)
    return np.array(adv).reshape(shape), np.array(ret).reshape(shape)


def clipped_value_loss(values_pred, values_old, returns, eps=0.2):
    v = _floats(values_pred)
    v_old = _floats(values_old)
    R = _floats(returns)
    total = 0.0
    for i in range(len(v)):
        change = v[i] - v_old[i]
        if change < -eps:
            change = -eps
        if change > eps:
            change = eps
        v_clip = v_old[i] + change
        total += max((v[i] - R[i]) ** 2, (v_clip - R[i]) ** 2)
    return 0.5 * total / len(v)
