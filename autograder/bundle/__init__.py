"""Grading on a platform: a bundle's configuration (`config`), its source and references (`source`), the
grader in the platform's container (`grader`, `container`, `student_folder`), the protocol a platform
implements (`platform`). The platforms themselves, and the `export` command (`export.py`), are
autograder/platforms/."""
