"""Policy evaluation stops on a relative change, max|V_new − V| < tol·max|V_new|: where V ≡ 0 (all rewards zero)
the change is 0 and 0 < 0 never holds, so the loop never ends."""
BREAKS = "policy_evaluation"
NAMED_BY = []
import numpy as np


def policy_evaluation(P, R, policy, gamma, tol=1e-10):
    P, R, policy = _validated(P, R, policy)
    P_pi = np.einsum("sa,sat->st", policy, P)
    r_pi = np.sum(policy * R, axis=1)
    V = np.zeros(len(r_pi))
    while True:
        V_new = r_pi + gamma * P_pi @ V
        if np.max(np.abs(V_new - V)) < tol * np.max(np.abs(V_new)):  # the mistake: a relative tolerance
            return V_new
        V = V_new
