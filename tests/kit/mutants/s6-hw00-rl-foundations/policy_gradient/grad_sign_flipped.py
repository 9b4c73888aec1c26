"""∇ log π computed as probabilities minus one-hot (the sign flipped)."""
import numpy as np


def grad_log_softmax(z, a):
    grad = softmax(z)
    grad[int(a)] -= 1.0
    return grad


CAUGHT_BY = ["test_grad_log_softmax_lesson", "test_grad_log_softmax_random"]
