"""∇ log π is returned as the one-hot of the chosen action: the − π term is forgotten."""
BREAKS = "grad_log_softmax"
NAMED_BY = ["вернули one-hot без вычитания π"]
import numpy as np


def grad_log_softmax(z, a):
    grad = np.zeros(len(z))
    grad[int(a)] = 1.0
    return grad


