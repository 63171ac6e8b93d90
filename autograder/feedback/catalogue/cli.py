"""The words of the command line's messages to whoever runs it."""

TEMPLATES: dict[str, str] = {
    "cli: stopped": "The self-check {stopped}; --timeout sets the limit.",
}
