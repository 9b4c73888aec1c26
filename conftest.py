# The graded suites get the implementation under test from this plugin (see grader/grading/plugin.py).
pytest_plugins = ["grader.grading.plugin"]
