"""token_gae's default λ is 1.0, not the signature's 0.95: every call that passes lam is right (train's passes its own
λ), a call that leaves it out gets Monte Carlo advantages."""
BREAKS = "token_gae"
NAMED_BY = []

_reference_token_gae = token_gae


def token_gae(rewards, values, mask, gamma=1.0, lam=1.0):  # the mistake: the default
    return _reference_token_gae(rewards, values, mask, gamma=gamma, lam=lam)
