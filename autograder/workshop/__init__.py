"""`autograder workshop`: a live view of the room for a workshop's host.

Participants opt in from their notebook (`check.join(URL)`); every `check()` then also sends a small,
validated report (a pseudonym, an optional seat label, the exercise, pass/fail per check, the error class
and the culprit op) to one Tornado process that keeps them in a temporary SQLite file and serves the host's
dashboard. The participant side (client.py) uses the standard library only; the server never imports torch.
"""
