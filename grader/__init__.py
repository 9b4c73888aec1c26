"""The homework kit's grader, in layers, lowest first; a module imports only from its own layer or a lower one
(tests/kit/test_layers.py reads every import):

- :mod:`grader.base`: what every layer shares: the homeworks and their parts, the records of what grading found,
  student text escaped for where it lands, a call told in one line;
- :mod:`grader.boundary`: the trust boundary: the submission's code runs only in a confined worker;
- :mod:`grader.grading`: the graded checks run and judged: pytest's plugin, the checking processes, the answer key,
  the hidden inputs and their secret;
- :mod:`grader.reporting`: what the results become: the student's feedback and scoreboard, the files for machines,
  the class report and the grades for an LMS;
- :mod:`grader.authoring`: the instructor's tools that make the homework: the student's files, the notebook, the
  release of the copy (instructor-only: the copy leaves the whole folder out);
- the front doors, here at the top: :mod:`grader.cli` (``homework/check.py``), :mod:`grader.batch` (a class),
  :mod:`grader.gradescope` (the autograder's package), :mod:`grader.notebook` (``check()`` in a notebook).
"""
