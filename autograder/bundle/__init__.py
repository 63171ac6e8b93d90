"""Grading on a platform: a bundle's configuration (`config`), its source and references (`source`), the
grader in the platform's container (`grader`, `container`, `student_folder`), the protocol a platform
implements (`platform`) and the `export` command (`cli`). The platforms themselves are autograder/platforms/."""
