"""The reporting layer: what the results of grading become. It may import :mod:`grader.base`, :mod:`grader.boundary`
and :mod:`grader.grading`.

- :mod:`feedback`: the scoreboard and the feedback a student reads;
- :mod:`export`: the results for machines (Gradescope's results.json, a CSV row);
- :mod:`class_report`: what a class got wrong, for the instructor; :mod:`similarity`: its alike submissions;
- :mod:`lms`: the grades as an LMS imports them.
"""
