"""The base layer: what every layer shares, importing nothing of the grader's.

- :mod:`homeworks`: where the homeworks are and what their parts are;
- :mod:`results`: the records of what grading found, per check and per part, and a submission's totals;
- :mod:`told`: a failed check as the student is told it (a hint that defers to other checks), read alike by the
  scoreboard and the Gradescope JSON;
- :mod:`escape`: student text as data, escaped for where it lands;
- :mod:`call_summary`: a call of the student's function told in one line;
- :mod:`extras`: what an instructor tool needs beyond the base install.
"""
