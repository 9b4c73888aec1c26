"""The in-place sweep of Sutton & Barto's pseudocode with Δ ← |v − V(s)| instead of Δ ← max(Δ, |v − V(s)|):
the stopping test sees only the last state's change, and when that state is terminal it stops after one sweep."""
BREAKS = "policy_evaluation"
NAMED_BY = ["Δ взято по последнему состоянию, а не max по всем"]
import numpy as np


def policy_evaluation(P, R, policy, gamma, tol=1e-10):
    P, R, policy = _validated(P, R, policy)
    V = np.zeros(P.shape[0])
    while True:
        delta = 0.0
        for s in range(len(V)):
            v = V[s]
            V[s] = np.sum(policy[s] * (R[s] + gamma * P[s] @ V))
            delta = abs(v - V[s])  # the mistake: not max(delta, ...)
        if delta < tol:
            return V


