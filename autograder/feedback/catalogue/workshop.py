"""The words of the live room: the participant's client, the host's view, the server's answers."""

TEMPLATES: dict[str, str] = {
}
