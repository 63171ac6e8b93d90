"""The words of reading a submission: which file, which exercise, the notebook's cells, the batch."""

TEMPLATES: dict[str, str] = {
    # a file read, bounded (files.py)
    "intake: a link": "{file} is a link, not a file: submit the file itself.",
    "intake: not a regular file": "{file} is not a regular file ({kind}): submit a .ipynb or .py file.",
    "intake: not opened": "{file} could not be opened ({why}).",
    "intake: too large": (
        "{file} is larger than {limit}: a submission is a notebook or a .py file of your answer; clear the "
        "notebook's outputs (Edit > Clear All Outputs) and save it."),
    # a submission read (submission.py)
    "intake: not a submission": "{file}: a submission is a .ipynb notebook or a .py file.",
    "intake: unreadable": "{file} could not be read ({why}).",
    "intake: not utf-8": "{file} is not a text file (it is not UTF-8).",
    "intake: empty py": "{file} is empty: write your answer in it (or submit the exercise notebook).",
    "intake: empty notebook": "{file} is empty.",
    "intake: bad json at": (
        "{file} is not valid notebook JSON (line {line}, column {column}: {why}). Was it edited in a text editor or "
        "truncated? Download it again from Jupyter."),
    "intake: json too deep": (
        "{file} is not a notebook: its JSON is nested too deeply to read. Was it edited in a text editor or "
        "truncated? Download it again from Jupyter."),
    "intake: bad json": (
        "{file} is not valid notebook JSON ({why}). Was it edited in a text editor or truncated? Download it again "
        "from Jupyter."),
    "intake: not a notebook": "{file} is JSON but not a valid notebook: {why}",
    "intake: no cells": "{file} has no cells.",
    "intake: no answer cells": (
        "{file} has no answer cells (code cells tagged '{tag}'). The tags may have been lost by copying cells into a "
        "new notebook: start again from the exercise notebook and paste your code into its answer cells."),
    "intake: lone surrogate": (
        "{file}: line {line} of the answer holds a character that is not valid Unicode (a lone surrogate, U+{code}); "
        "delete it, or write it as an escape such as '\\ud800'."),
    # which exercise a file is (exercise_of.py)
    "intake: another exercise": (
        "{file} is the notebook of exercise {declared} (its metadata says so), but exercise {asked} was asked for: "
        "submit the notebook of exercise {asked}."),
    "intake: unknown declared": (
        "{file} names an unknown exercise {declared} in its metadata (known: {known}): start again from the exercise "
        "notebook."),
    "intake: no exercise": (
        "{file} does not say which exercise it is (no notebook metadata, no exercise id in its name): grade it with "
        "--exercise ID."),
    "intake: unknown asked": "unknown exercise {asked}; known: {known}",
    # one student's files on a platform (bundle/student_folder.py)
    "intake: no file at all": "no .ipynb or .py file",
    "intake: not submitted": (
        "No file for exercise {exercise} was found among what you submitted ({found}). Submit {notebook}, the "
        "exercise notebook with your answer."),
    "intake: another exercise's file": (
        "{file} (the notebook of exercise {exercise}, which this assignment does not grade)"),
    "intake: no exercise's file": "{file} (it is none of this assignment's exercises)",
    "intake: not graded": (
        "Not graded: {files}. This assignment grades {expected}: submit those files, named so and made from the "
        "exercise notebooks (their metadata says which exercise each one is)."),
    "intake: which copy": "{output} (Graded {graded}; not graded: {others}.)",
    "intake: grader error for staff": "GRADER ERROR on exercise {exercise} ({file}): {output}",
    "intake: no file": "no file",
    # the batch (batch.py)
    "intake: grader error": "Internal grading error (not your fault; your teacher has been told): {detail}",
    # --- identity
    "intake: handed in for another assignment": (
        "{file} was handed in for the assignment of exercise {assignment}, but it is exercise {says} (its metadata, "
        "or its name, says so): it is not graded as either. Hand in the notebook of exercise {assignment} there, "
        "and exercise {says} in its own assignment."),
    "intake: folder and asked differ": (
        "{file} was handed in for the assignment of exercise {assignment}, but --exercise {asked} was asked for: "
        "not graded. Grade that assignment's folder without --exercise, or with --exercise {assignment}."),
    # --- parse
    "intake: bad coding line": (
        "{file} cannot be read as Python: {why}. Delete its coding line (`# -*- coding: ... -*-`) and save the file "
        "as UTF-8."),
    "intake: not in its encoding": (
        "{file} says it is written in {encoding} (its coding line), but line {line} is not: save the file as UTF-8 "
        "and delete the coding line."),
}
