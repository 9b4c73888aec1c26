"""The trust boundary: the submission's code runs only in a confined worker; the checking process takes from it
nothing but data. It may import :mod:`grader.base` only.

The rule. The checking process (pytest with grader/grading/plugin.py) holds the checks, their weights and the verdicts.
It never imports a module of the submission's, never calls an object the worker made, never opens a path the
worker names, never writes where the worker can write, and never takes the worker's word for what it can
compare itself. Everything the worker sends is plain data (numbers, strings, lists, tuples, dicts, NumPy arrays
of numbers, random generators) and is the student's answer, never a verdict. The command line (grader/grading/runner.py)
takes from the checking process only events signed with a key the worker never sees (:mod:`events`).

One module per concern; each docstring says what it accepts from the worker, and how:

- :mod:`confine`: the worker's confinement (namespaces and its file system view, resource limits, no new
  processes), and the clean environment it starts with;
- :mod:`zygote` (checking side) and :mod:`worker` (``zygote()``): the confined process that forks the workers;
- :mod:`template`: the worker template zygotes are forked from in a batch; :mod:`forkserver`: the fork server
  both of the grader's templates are;
- :mod:`link`: one session's worker at a time, started, asked and discarded; :mod:`channel`: its pipes;
- :mod:`meter`: what each request costs, the worker's CPU time and waiting as the kernel counts them;
- :mod:`staging`: what of the submission the worker gets (its modules in a fresh scratch folder);
- :mod:`wire`: the only format the worker's answers come in;
- :mod:`replies`: an answer judged, and what the call did to its arguments;
- :mod:`journal`: the calls made on the kit's environments, recorded there and replayed here;
- :mod:`hang`: where the code was when a call ran past its time limit;
- :mod:`tracing`: which of the student's own functions a call went through;
- :mod:`errors`: what a failed call raises here; :mod:`proxy` and :mod:`session`: what a graded test holds;
- :mod:`worker` and :mod:`loading`: the worker's own side, the only code that imports the submission.
"""
