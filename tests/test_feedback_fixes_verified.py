"""Issue 34 §5: the fix the feedback proposes is one that works. A rewrite of the culprit line is shown only
after the answer, with it applied, was graded with the exercise's own checks and passed every one of them
(pipeline.verified); words alone cannot be applied and are shown as they are.

Every catalogue entry (the report's broken code and each known wrong answer, references/<id>.py) is graded as
the grader grades it; each rewrite its feedback proposes is applied to it and graded again: none fails. The
same rewrites, unverified, include ones that fail, so the test can fail."""

from __future__ import annotations

import re

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


def test_whether_a_fix_is_shown_never_depends_on_a_hidden_input():
    """A rewrite is verified on the public trials alone: an answer whose code after the culprit line passes or
    fails by the hidden values (found by the red team) reads nothing of them in whether its fix is shown."""
    broken = known_submissions("residual_add").broken
    code = broken.replace("        return out\n", "        if x.shape[1] == 5 and float(x.detach().flatten()[0]) > 0:\n"
                                                  "            out = out * 1.5\n        return out\n")
    # which checks pass may differ by salt (the answer's own maths); whether a fix is shown, and which, may not
    seen = {salt: sorted({m for t in grade_code("residual_add", code, salt=salt).tests
                          for m in re.findall(r"A fix to try \(line \d+\): `[^`]*` -> `[^`]*`", t.output or "")})
            for salt in ("s1", "s2", "s3", "s4")}
    assert len({repr(v) for v in seen.values()}) == 1, seen


def test_applied_counts_lines_as_python_does():
    """A comment holding \\x85 (a line break to str.splitlines, not to Python) moves no line: the rewrite lands on
    the line the report names, and the comment's tail stays a comment."""
    code = "def f(out, x):\n    # a note\x85print('tail')\n    y = 1\n    out += x\n    return out\n"
    fixed = applied(code, LineFix(4, "out += x", "out = out + x", ""))
    assert fixed is not None and "    out = out + x\n" in fixed and "\x85print('tail')\n" in fixed
    compile(fixed, "<answer>", "exec")


def test_one_rewrite_at_most_is_graded_per_answer():
    """An answer that scatters its writes (a different culprit line per trial) costs one more run at most."""
    code = "a += 1\nb += 1\nc += 1\n"
    fixes = iter([LineFix(n, f"{v} += 1", f"{v} = {v} + 1", "") for n, v in ((1, "a"), (2, "b"), (3, "c"))])
    graded = []

    def regrade(text):
        graded.append(text)
        return grade_code("residual_add", known_submissions("residual_add").broken.replace("out += x", "out = out + x"),
                          public_only=True)

    check = pipeline.verified(lambda report: next(fixes), code, regrade)
    shown = [check({}) for _ in range(3)]
    assert len(graded) == 1 and shown[0] is not None and shown[1:] == [None, None]
