"""The words of what a teacher reads after grading: the class report, the LMS gradebooks."""

TEMPLATES: dict[str, str] = {
}
