"""A deliberately plain, loop-heavy but correct solution of the part `policy_gradient` (a kit test variant, not the
reference).

Written the way a student who knows Python better than NumPy would: softmax row by row with math.exp, the
gradient and the REINFORCE step element by element, the bandit's gradient variance by explicit sums. The
bandit follows the statement's random protocol (rng.choice(3, p=pi), then rng.normal(0, 1)). NumPy is used
only to read the inputs, to draw from the generator and to build the returned arrays.
"""
import math

import numpy as np


def _softmax_row(row):
    top = row[0]
    for x in row:
        if x > top:
            top = x
    exps = []
    total = 0.0
    for x in row:
        e = math.exp(x - top)
        exps.append(e)
        total += e
    out = []
    for e in exps:
        out.append(e / total)
    return out


def softmax(z):
    arr = np.asarray(z, dtype=float)
    A = arr.shape[-1]
    rows = arr.reshape(-1, A).tolist()
    result = []
    for row in rows:
        result.append(_softmax_row(row))
    return np.array(result).reshape(arr.shape)


def _grad_log(z_list, a):
    pi = _softmax_row(z_list)
    grad = []
    for b in range(len(z_list)):
        if b == a:
            grad.append(1.0 - pi[b])
        else:
            grad.append(-pi[b])
    return grad


def grad_log_softmax(z, a):
    z_list = [float(x) for x in z]
    return np.array(_grad_log(z_list, int(a)))


def reinforce_step(z, a, G, lr, baseline=0.0):
    z_list = [float(x) for x in z]
    grad = _grad_log(z_list, int(a))
    weight = float(lr) * (float(G) - float(baseline))
    z_new = []
    for i in range(len(z_list)):
        z_new.append(z_list[i] + weight * grad[i])
    return np.array(z_new)


def reinforce_bandit(use_baseline, seed, steps=2000, lr=0.01):
    means = [10.0, 10.5, 9.5]
    rng = np.random.default_rng(seed)
    theta = [0.0, 0.0, 0.0]
    b = 0.0
    early_grads = []
    pi = _softmax_row(theta)
    for _t in range(steps):
        pi = _softmax_row(theta)
        a = int(rng.choice(3, p=np.array(pi)))
        r = means[a] + float(rng.normal(0, 1))
        if use_baseline:
            weight = r - b
        else:
            weight = r
        g = []
        for i in range(3):
            if i == a:
                g.append(weight * (1.0 - pi[i]))
            else:
                g.append(weight * (-pi[i]))
        if len(early_grads) < 200:
            early_grads.append(g)
        for i in range(3):
            theta[i] += lr * g[i]
        b += 0.05 * (r - b)
    grad_var = 0.0
    n = len(early_grads)
    for i in range(3):
        mean = 0.0
        for g in early_grads:
            mean += g[i]
        mean /= n
        var = 0.0
        for g in early_grads:
            var += (g[i] - mean) ** 2
        grad_var += var / n
    return np.array(pi), float(grad_var)
