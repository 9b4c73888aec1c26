# The graded suites get the implementation under test from this plugin (see grader/plugin.py).
pytest_plugins = ["grader.plugin"]
