"""∇ log π computed as probabilities minus one-hot (the sign flipped)."""


def grad_log_softmax(z, a):
    grad = softmax(z)
    grad[int(a)] -= 1.0
    return grad


