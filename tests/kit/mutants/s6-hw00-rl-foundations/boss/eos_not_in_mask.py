"""sample_answers leaves the end token out of the mask: the policy never learns when to stop,
and the score lands on the last letter instead of on EOS."""
BREAKS = "sample_answers"
NAMED_BY = ["сам EOS не входит в маску"]
_reference_sample_answers = sample_answers  # noqa: F821 - the reference, defined above in the module


def sample_answers(theta, w, ref_theta, prompt_ids, rng):
    batch = _reference_sample_answers(theta, w, ref_theta, prompt_ids, rng)
    keep = (batch["tokens"] != toy_lm.EOS).astype(float)  # noqa: F821
    for key in ("mask", "logp", "ref_logp", "values"):
        batch[key] = batch[key] * keep
    batch["lengths"] = keep.sum(axis=1).astype(int)
    return batch


