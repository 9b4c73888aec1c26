"""The homework kit's grader: loading an implementation, running graded checks, reporting."""
