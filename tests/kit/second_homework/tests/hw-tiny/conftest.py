"""The graded suite of hw-tiny receives its part's module as a fixture (see grader/plugin.py)."""
from grader.plugin import module_fixture

returns = module_fixture("returns")
