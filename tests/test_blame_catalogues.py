"""The grader's "How to fix it", tried on every exercise's catalogue: for each BROKEN and WRONG entry that raises the
in-place error, the rewrite `suggest_from_line` proposes for its culprit (from the report's lines alone, as
feedback.py calls it) is applied to the entry, and, where the program then meets another in-place error (a
second write, as `blame --fix` follows it), that one's too; the result is graded. It must score full marks and
be no WRONG entry; words for an optimizer step never propose a `clone()`. The rnn_hidden starter gets the detach
of its carried state.

One exception, stated: capstone's BROKEN has two bugs, and only one raises. The suggestion fixes that one, and
the result is the WRONG entry "only the raising line fixed": the other bug (`h.data /= ...`) raises nothing, so
no report, and no suggestion, can name it. The test holds the result to exactly that entry's failures."""

from __future__ import annotations

import pytest

from autograder import trials as trial_plan
from autograder.blame.suggest.suggest import Suggestion, suggest_from_line
from autograder.exercises import EXERCISES, get
from autograder.harness import run_answer
from autograder.reference_store import known_submissions

CATALOGUES = {eid: known_submissions(eid) for eid in sorted(EXERCISES)}
ENTRIES = [(eid, name) for eid, known in CATALOGUES.items()
           for name in ["BROKEN", *sorted(known.wrong)]]


def code_of(eid: str, name: str) -> str:
    known = CATALOGUES[eid]
    return known.broken if name == "BROKEN" else known.wrong[name][0]


def culprit_reports(eid: str, code: str) -> list[dict]:
    """The locator's report of each public trial that raised the in-place error (as the worker sends it)."""
    exercise = get(eid)
    trials = trial_plan.plan(exercise, ("cpu",), True)
    report = run_answer(exercise, code, trials, trial_plan.draw(exercise, trials, trial_plan.PUBLIC_SEED))
    found = {}
    for outcome in report.outcomes.values():
        culprit = outcome.error.culprit if outcome.error is not None else None
        if culprit and culprit.get("culprit", {}).get("line") is not None:
            key = (culprit["culprit"]["line"], culprit["saved_by"].get("line"))
            found.setdefault(key, culprit)
    return list(found.values())


def applied(code: str, s: Suggestion) -> str:
    """The entry with the suggested rewrite applied at its line, indented as that line."""
    lines = code.splitlines()
    assert s.before is not None and s.after is not None and "\n" not in s.before, s
    old = lines[s.line - 1]
    assert old.strip() == s.before.strip(), (old, s.before)
    indent = old[: len(old) - len(old.lstrip())]
    return "\n".join(lines[: s.line - 1] + [indent + line.strip() for line in s.after.splitlines()]
                     + lines[s.line:]) + "\n"


def same_code(a: str, b: str) -> bool:
    return [line.strip() for line in a.strip().splitlines()] == [line.strip() for line in b.strip().splitlines()]


ONE_BUG_LEFT = {("capstone", "BROKEN"): ("only the raising line fixed", set())}
"""Entries whose other bug raises nothing (the module's docstring): (exercise, entry) -> (the WRONG entry it
becomes, the checks the fixed entry fails besides that entry's)."""

MAX_CULPRITS = 4


def suggested_fix(eid: str, code: str) -> tuple[str, list[Suggestion]]:
    """The entry with each suggested rewrite applied, culprit after culprit, and the suggestions made."""
    made = []
    for _ in range(MAX_CULPRITS):
        reports = culprit_reports(eid, code)
        if not reports:
            break
        s = suggest_from_line(reports[0])
        made.append(s)
        if s is None or s.after is None:
            break
        code = applied(code, s)
    return code, made


def proposes_a_copy(s: Suggestion, report: dict) -> bool:
    """Whether the words or the rewrite propose `clone()` (the user's own code, quoted, does not count)."""
    why = s.why
    for quoted in (report["culprit"].get("code"), report.get("saved_by", {}).get("code")):
        why = why.replace(quoted or "\0", "")
    return "clone()" in why or ".clone()" in (s.after or "")


@pytest.mark.parametrize(("eid", "name"), ENTRIES, ids=[f"{e}-{n}" for e, n in ENTRIES])
def test_no_suggested_rewrite_is_a_wrong_fix_or_fails_its_exercise(grade, eid, name):
    code = code_of(eid, name)
    if not get(eid).rewrites:  # the task rules the usual rewrite out: the grader's feedback proposes none
        assert not any("A fix to try" in t.output for t in grade(eid, code).tests)
        return
    for report in culprit_reports(eid, code):
        s = suggest_from_line(report)
        if s is not None and "step(" in (report["culprit"].get("code") or ""):
            assert not proposes_a_copy(s, report), s
    fixed, made = suggested_fix(eid, code)
    if not made or all(s is None or s.after is None for s in made):
        return  # words only (or no in-place error): nothing is applied
    failed = {t.name for t in grade(eid, fixed).tests if t.status == "failed"}
    if (eid, name) in ONE_BUG_LEFT:
        left, besides = ONE_BUG_LEFT[(eid, name)]
        wrong_failed = {t.name for t in grade(eid, CATALOGUES[eid].wrong[left][0]).tests if t.status == "failed"}
        assert failed == wrong_failed | besides
        return
    wrong = [w for w, (wrong_code, _) in CATALOGUES[eid].wrong.items() if same_code(fixed, wrong_code)]
    assert not wrong, f"the suggestions make the WRONG entry {wrong}"
    assert not failed, ([(s.before, s.after) for s in made if s is not None], failed)


def test_the_rnn_starter_is_told_to_detach_its_carried_state(grade):
    known = CATALOGUES["rnn_hidden"]
    (report,) = culprit_reports("rnn_hidden", known.broken)[:1]
    assert report["saved_by"]["line_ran_again"] is True  # the state came from the previous chunk's pass
    s = suggest_from_line(report)
    assert s.kind == "detach_state", s
    assert s.after.splitlines()[0] == ("h_cur = h_cur.detach() if hasattr(h_cur, 'detach') "
                                       "else tuple(s.detach() for s in h_cur)")
    assert "truncated backpropagation through time" in s.why
    for words in ("move the step", "run the forward again", "clone"):
        assert words not in s.why
    assert grade("rnn_hidden", applied(known.broken, s)).score == 10


def test_two_losses_on_one_graph_still_get_the_two_choices_in_words():
    """Without a carried state (the saving line ran once), a step between two backward passes is a choice."""
    report = {"culprit": {"op": "torch.Tensor.add_", "file": "<answer>", "line": 9, "code": "opt.step()"},
              "saved_by": {"op": "torch.nn.functional.linear", "file": "<answer>", "line": 5,
                           "code": "out = net(x)", "saved_as": "input", "line_ran_again": False}}
    s = suggest_from_line(report)
    assert s.after is None and "run the forward again" in s.why and "(`out = net(x)`, line 5)" in s.why
