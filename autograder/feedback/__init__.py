"""The words: every sentence the course says to a learner or a teacher, and the code that renders facts as them.

- `wording.py`: the one catalogue of templates, by message id with named fields (`say(id, **fields)`);
- `describe.py`: an error -> what it means and how to fix it (feedback for one cause);
- `redact.py`: what of a hidden trial's error may be shown;
- `text.py`: a Result -> the feedback text a student reads.

Facts travel as fields (result.Cause, TestResult.trial); only these modules turn them into prose, so a
rewording, or another language, is a change here alone.
"""
