"""The answer key of the part `returns` (the instructor's: never in the student's copy; grader.grading.key)."""
import numpy as np


def explicit_sum(rewards, gamma):
    """G_0 = Σ_t γ^t r_t, summed forwards (the reference folds the episode backwards)."""
    rewards = np.asarray(rewards, dtype=float)
    return float(np.sum(gamma ** np.arange(len(rewards)) * rewards))
