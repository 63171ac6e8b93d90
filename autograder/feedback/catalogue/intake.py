"""The words of reading a submission: which file, which exercise, the notebook's cells, the batch."""

TEMPLATES: dict[str, str] = {
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
    # the batch (batch.py)
    "intake: grader error": "Internal grading error (not your fault; your teacher has been told): {detail}",
}
