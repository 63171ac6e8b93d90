"""Issue 34 §5: the fix the feedback proposes is one that works. A rewrite of the culprit line is shown only
after the answer, with it applied, was graded with the exercise's own checks and passed every one of them
(pipeline.verified); words alone cannot be applied and are shown as they are.

Every catalogue entry (the report's broken code and each known wrong answer, references/<id>.py) is graded as
the grader grades it; each rewrite its feedback proposes is applied to it and graded again: none fails. The
same rewrites, unverified, include ones that fail, so the test can fail."""

from __future__ import annotations

import pytest

from autograder import pipeline
from autograder.exercises import EXERCISES, get
from autograder.feedback.describe import LineFix
from autograder.pipeline import applied, grade_code, passes, prepare, suggested_rewrite
from autograder.reference_store import known_submissions
from tests.test_blame_catalogues import culprit_reports

pytestmark = pytest.mark.slow

ENTRIES = [(eid, name, code) for eid in sorted(EXERCISES) if get(eid).rewrites
           for name, code in [("the report's code", known_submissions(eid).broken),
                              *((n, c) for n, (c, _) in sorted(known_submissions(eid).wrong.items()))]]


def proposed(eid: str, code: str, monkeypatch) -> list[LineFix]:
    """The rewrites the feedback of a grading of `code` shows: those the verified suggester let through."""
    shown: list[LineFix] = []
    real = pipeline.verified

    def recording(suggest, answer, regrade):
        checked = real(suggest, answer, regrade)

        def record(report):
            fix = checked(report)
            if fix is not None and fix.after is not None:
                shown.append(fix)
            return fix
        return record

    monkeypatch.setattr(pipeline, "verified", recording)
    result = grade_code(eid, code, public_only=True)
    assert all(f"`{fix.after.splitlines()[0]}" in "".join(t.output or "" for t in result.tests) for fix in shown)
    return shown


@pytest.mark.parametrize("eid", sorted({e for e, _, _ in ENTRIES}))
def test_every_rewrite_the_feedback_proposes_passes_the_exercise(eid, monkeypatch):
    shown = 0
    for _, name, code in (e for e in ENTRIES if e[0] == eid):
        for fix in proposed(eid, code, monkeypatch):
            fixed = applied(code, fix)
            assert fixed is not None, (name, fix)
            assert passes(grade_code(eid, fixed)), (name, fix)  # hidden scenarios too
            shown += 1
    if eid == "residual_add":
        assert shown  # the report's `out += x` -> `out = out + x` is still proposed


def test_unverified_the_same_suggestions_include_a_fix_that_fails():
    """What the feedback proposed before: the locator's suggestion for every entry, applied without grading
    first. Some fail their exercise; the verified feedback above withholds exactly those."""
    failing = []
    for eid, name, code in ENTRIES:
        prepared = prepare(get(eid), public_only=True)
        assert prepared.explainer is not None
        for report in culprit_reports(eid, code)[:1]:
            fix = suggested_rewrite(report)
            fixed = applied(code, fix) if fix is not None else None
            if fixed is not None and not passes(grade_code(eid, fixed, public_only=True)):
                failing.append((eid, name, fix.after))
    assert failing, "no unverified suggestion fails: this test could not catch a wrong one"
