"""∇ log π computed as probabilities minus one-hot (the sign flipped)."""
BREAKS = "grad_log_softmax"
NAMED_BY = ["знак перевёрнут: π − one-hot"]


def grad_log_softmax(z, a):
    grad = softmax(z)
    grad[int(a)] -= 1.0
    return grad


