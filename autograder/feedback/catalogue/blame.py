"""The words of the culprit locator: its report, its suggestions, blame --fix."""

TEMPLATES: dict[str, str] = {
}
