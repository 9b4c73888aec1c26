"""train never passes β on to the rewards: no KL penalty at all, whatever beta the caller asks for."""
BREAKS = "train"
NAMED_BY = ["β не доходит до token_rewards"]
_reference_train = train  # noqa: F821 - the reference, defined above in the module


def train(*args, beta=0.02, **kwargs):
    return _reference_train(*args, beta=0.0, **kwargs)


