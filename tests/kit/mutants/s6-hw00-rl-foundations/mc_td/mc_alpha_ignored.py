"""Constant-α Monte Carlo ignores alpha and returns the sample averages."""
BREAKS = "mc_prediction"
NAMED_BY = ["alpha проигнорирован"]

_reference_mc_prediction = mc_prediction


def mc_prediction(episodes, n_states, gamma, first_visit=True, alpha=None):
    return _reference_mc_prediction(episodes, n_states, gamma, first_visit=first_visit, alpha=None)


