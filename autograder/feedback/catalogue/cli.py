"""The words of the command line's messages to whoever runs it."""

TEMPLATES: dict[str, str] = {
    "cli: error": "error: {message}",
    "cli: public salt": (
        "Graded with the course's public default salt: anyone with the repository can draw the same hidden "
        "inputs. For a class, set a secret salt per term ({env}=...), as `autograder export` requires."),
    "cli: stopped": "The self-check {stopped}; --timeout sets the limit.",
    # grade
    "cli: jobs": "--jobs must be at least 1",
    "cli: why column": "failed checks, or why",
    # list
    "cli: list title": "Exercises",
    "cli: list columns": "#|id|title|points|checks",  # five names, each after a |; keep four |s
    "cli: no such path": "no such file or folder: {paths}",
    "cli: no submissions": "no .ipynb or .py submissions found under {paths}",
    "cli: pool warning": "WARNING: {warning}",
    "cli: grader errors": (
        "{errors} hit an internal grading error (not the students' fault): see their results.json, then run the same "
        "command again to regrade them"),
    "cli: results are in": "Results: {out}/<submission>/results.json; gradebook: {gradebook}",
    "cli: table option": " (--table lists every submission)",
    "cli: next": "Next: autograder report {out}   (a page per student and submission, why each failed, the LMS files)",
    # assign, publish, release
    "cli: assigned": "wrote {out}/ from {solutions}/",
    "cli: published": "wrote the public data of {exercises} exercises to {folder}",
    "cli: released": (
        "wrote the student edition into {out}: {parts}.\nPublish it at {repository} (its setup cells, pyproject.toml "
        "and the book's buttons point there). It holds no solutions/ and no references/: keep those to yourself."),
    # --check of assign and publish
    "cli: assign drift": "Run `autograder assign` to regenerate exercises/ from solutions/.",
    "cli: assign matches": "{out}/ matches {solutions}/",
    "cli: publish drift": "Run `autograder publish` to remake the public data from references/.",
    "cli: publish matches": "{folder} matches references/ ({exercises} exercises)",
    # release (release.py)
    "cli: release repository": "--repository must be the address of your copy (https://..., git@...), got {got}",
    "cli: release not empty": "{out} is not an empty folder: give a new one (nothing is overwritten)",
    "cli: release no repository line": "pyproject.toml has no [project.urls] Repository line to point at your copy",
    "cli: release no solutions": "no solution notebooks in {folder}: run release from the course's repository",
    "cli: release no book repository": "book/_config.yml has no repository to point at your copy",
    "cli: release left out page": (
        "# {title}\n\nThis page shows the fix of each exercise, as code: it is the answer key, so the student edition "
        "of the course leaves it out. Ask your teacher for it once your exercises are graded.\n"),
    # export's configuration (bundle/config.py)
    "cli: export unknown exercises": "unknown exercise(s) {unknown}; known: {known}",
    "cli: export timeout": "timeout must be positive",
    "cli: submissions": "{count} submissions: ",
    "cli: list separator": ", ",
    "cli: status count": "{count} {status}",
    "cli: grading": "grading",
    "cli: unknown language": "the language {language} is not one the course speaks ({known})",
    "cli: export memory": (
        "memory must be a whole number of MB, at least {least} (the course's solutions need about 20 to 30), got "
        "{got}"),
    "cli: export options": "a bundle's platform options are text",
    # --device (settings.resolve)
    "cli: unknown device": "unknown device {choice}; choose one of {choices}",
    "cli: no cuda": "--device cuda: no CUDA device is available here (torch.cuda.is_available() is False)",
    "cli: no cuda for all": "--device all: no CUDA device here, grading on the CPU only",
}
