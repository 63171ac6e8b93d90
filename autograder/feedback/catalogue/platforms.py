"""The words of the platforms' bundles and exports (Gradescope, PrairieLearn)."""

TEMPLATES: dict[str, str] = {
}
