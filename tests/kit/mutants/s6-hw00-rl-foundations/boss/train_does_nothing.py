"""train does nothing: it samples no answer and makes no update, and returns one record per update with the right
bookkeeping (update, n_answers) and the monitoring of a policy that never leaves the SFT model. Rejected in the
student's copy by the learning curve and the checks of determinism and of train's arguments, and in the grade by the
audit of one run (its history recomputed by the key's rule from the answers sample_answers draws)."""
BREAKS = "train"
NAMED_BY = []


def train(n_updates=40, seed=0, batch_size=64, tables=None, **kwargs):
    return [{"update": update, "score": 0.12, "kl_ref": 0.0, "entropy": 0.9, "clipfrac": 0.0, "approx_kl": 0.0,
             "value_loss": 0.0, "n_answers": update * batch_size} for update in range(1, n_updates + 1)]
