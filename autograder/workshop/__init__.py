"""`autograder workshop`: a live view of the room for a workshop's host.

Participants join from their notebook (`check.join(URL)`); every `check()` then also sends a small,
validated attempt (the pseudonym and secret the server gave them, the exercise, pass/fail per public check,
the error class, the culprit op and grad mode) to one Tornado process, which keeps the room in a state file
(a restart is the same room), matches failing attempts against the catalogues' known wrong answers
(course.json), and serves the host's dashboard. The participant side (client.py) uses the standard library
only; the server never imports torch.
"""
