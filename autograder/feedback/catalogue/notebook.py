"""The words of the learner's notebook: check(), predict(), diagnose(), the book's questions."""

TEMPLATES: dict[str, str] = {
}
