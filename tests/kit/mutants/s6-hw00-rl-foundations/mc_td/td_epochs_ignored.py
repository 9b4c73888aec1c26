"""n_epochs is ignored: the batch is played once."""
BREAKS = "td0_prediction"
NAMED_BY = ["n_epochs проигнорирован"]

_reference_td0_prediction = td0_prediction


def td0_prediction(episodes, n_states, alpha, gamma, V0=None, n_epochs=1):
    return _reference_td0_prediction(episodes, n_states, alpha, gamma, V0=V0, n_epochs=1)


