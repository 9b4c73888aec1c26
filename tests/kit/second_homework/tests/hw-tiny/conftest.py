"""The graded suite of hw-tiny receives its part's module as a fixture (see grader/grading/plugin.py)."""
from grader.grading.plugin import module_fixture

returns = module_fixture("returns")
