"""The authoring layer: the instructor's tools that make the homework, all of it instructor-only (the student's copy
leaves this folder out). It may import every layer below the front doors.

- :mod:`stubs` and :mod:`build`: the student's files from the single source in ``solutions/``;
- :mod:`notebook_build`: the homework's notebook from the same source;
- :mod:`release`: the student's copy of the repository;
- :mod:`constraints`: the pins of the kit's install.
"""
