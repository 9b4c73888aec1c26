"""The grading layer: the graded checks run and judged. It may import :mod:`grader.base` and :mod:`grader.boundary`.

- :mod:`plugin`: pytest's side: the module under test as a fixture, each check's record, the gate of hidden inputs;
- :mod:`runner`: the checking processes, started (:mod:`warm`: forked from a template) and read;
- :mod:`checks`: the assertion helpers a graded test calls; :mod:`explain`: why a check failed, in one sentence;
- :mod:`key`: the answer key as a check asks it; :mod:`public_answers` and :mod:`hidden_answers`: its answers,
  recorded on the public inputs and on the hidden inputs of a secret;
- :mod:`hidden`: the hidden inputs; :mod:`secret`: the instructor's secret they derive from;
- :mod:`budget`: each part's CPU budget; :mod:`kit_digest`: the kit's own files and their digest;
- :mod:`submissions`: what a class folder holds to grade.
"""
