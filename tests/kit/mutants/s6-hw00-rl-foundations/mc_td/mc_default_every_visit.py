"""mc_prediction's default is first_visit=False: every call that passes first_visit is right, a call that leaves it
out counts every visit."""
BREAKS = "mc_prediction"
NAMED_BY = []

_reference_mc_prediction = mc_prediction


def mc_prediction(episodes, n_states, gamma, first_visit=False, alpha=None):  # the mistake: the default
    return _reference_mc_prediction(episodes, n_states, gamma, first_visit=first_visit, alpha=alpha)
