"""Everything that leaves the grader's machine: platform bundles (Gradescope, PrairieLearn), HTML feedback
and an LMS gradebook. All of it derives from the course's results (autograder/result.py), never re-grades.

Modules: `source` (copying this package into a bundle), `container` (grading inside a platform's
container), `gradescope`, `prairielearn`, `graded` (reading a graded folder), `lms`, `plots`, `html`,
`cli` (the `export` and `report` subcommands).
"""
