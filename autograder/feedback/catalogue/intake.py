"""The words of reading a submission: which file, which exercise, the notebook's cells, the batch."""

TEMPLATES: dict[str, str] = {
}
