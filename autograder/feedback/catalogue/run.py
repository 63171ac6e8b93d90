"""The words of a run of the answer: the runner, the sandbox, the harness, the public data."""

TEMPLATES: dict[str, str] = {
}
