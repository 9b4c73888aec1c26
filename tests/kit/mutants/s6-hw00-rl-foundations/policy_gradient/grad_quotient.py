"""∇ log π(a) computed by the log-derivative trick as a quotient, ∇π(a) / π(a) with ∇π(a) = π(a)·(e_a − π): where
log π(a) < −745, π(a) is 0 in float64 and every entry is 0/0 = NaN."""
BREAKS = "grad_log_softmax"
NAMED_BY = ["посчитан как частное ∇π(a) / π(a)"]
import numpy as np


def grad_log_softmax(z, a):
    pi = softmax(z)
    one_hot = np.zeros_like(pi)
    one_hot[int(a)] = 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        return pi[int(a)] * (one_hot - pi) / pi[int(a)]  # the mistake: ∇π(a) / π(a)
