"""course.json, the live view's knowledge of the course, held to the catalogues of known submissions
(references/<id>.py) as `autograder publish --check` holds the public data: regenerating it is one command,
`autograder workshop misconceptions`, and a catalogue entry added without it fails here."""

from __future__ import annotations

import json

import pytest

from autograder.catalog import exercise_ids
from autograder.workshop import misconceptions
from autograder.workshop.course import DATA


@pytest.fixture(scope="module")
def built() -> dict:
    return misconceptions.build()  # runs every BROKEN and WRONG entry in the self-check path, and each proof


def test_the_shipped_course_json_is_what_the_catalogues_give(built):
    assert misconceptions.drift(DATA, built) == [], "run `autograder workshop misconceptions` and commit course.json"


def test_a_changed_catalogue_is_caught(built, tmp_path):
    changed = json.loads(json.dumps(built))
    changed["exercises"]["residual_add"]["misconceptions"][0]["label"] = "something else"
    del changed["exercises"]["leaf_sgd"]
    path = tmp_path / "course.json"
    path.write_text(misconceptions.text(changed))
    assert misconceptions.drift(path, built) == ["leaf_sgd: differs", "residual_add: differs"]


def test_every_exercise_is_there_with_words_only(built):
    assert list(built["exercises"]) == list(exercise_ids())
    for entry in built["exercises"].values():
        for m in entry["misconceptions"]:
            assert m["label"] and m["explanation"] and m["read"]
            assert "\n" not in m["explanation"] and "def " not in m["explanation"]  # words, never code
    labels = [m["label"] for m in built["exercises"]["residual_add"]["misconceptions"]]
    assert labels[0] == "the bug, unchanged" and "no_grad around +=" in labels


def test_a_claim_that_no_longer_holds_stops_the_generator(monkeypatch):
    broken = misconceptions.EXPLANATIONS[0].__class__(*list(vars(misconceptions.EXPLANATIONS[0]).values())[:4],
                                                      proof=lambda: False)
    monkeypatch.setattr(misconceptions, "EXPLANATIONS", (broken,))
    with pytest.raises(RuntimeError, match="no longer holds"):
        misconceptions.build()


def test_labels_fit_two_projector_lines_and_never_merge_the_starter():
    from autograder.workshop.course import load

    course = load()
    for m in course.by_id.values():
        assert "starter" not in m.label, m.label
        assert len(m.label) <= 130, m.label  # at most MAX_NAMES names, then how many more
        assert len(m.explanation) <= 200 and "(" not in m.explanation.replace("`torch.no_grad()`", ""), m.explanation
    (c,) = [m for m in course.by_id.values() if m.label == "detaches h but not c"]
    assert "c still carries the last chunk's graph" in c.explanation and "detach()` shares" not in c.explanation


def test_a_label_written_for_its_answer_reaches_the_projector(tmp_path):
    from autograder.workshop.course import load
    from tests.test_workshop import workshop_server

    course = load()
    (key,) = [k for (e, k), m in course.table.items() if m.label == "detaches h but not c"]
    c = course.table["rnn_hidden", key]
    failing, error, op, grad_mode = json.loads(key)
    with workshop_server(tmp_path, "--exercises", "rnn_hidden") as server:
        ada = server.join()
        checks = [{"name": n, "passed": n not in failing} for n in sorted(course.checks["rnn_hidden"])]
        assert ada.report(exercise="rnn_hidden", checks=checks, error=error, op=op, grad_mode=grad_mode)[0] == 200
        assert server.host("spotlight", {"misconception": c.id}) == 204
        _, data = server.state()
    assert [(m["label"], m["participants"]) for m in data["misconceptions"]] == [("detaches h but not c", 1)]
    assert data["spotlight"]["explanation"] == c.explanation


def test_a_tried_fix_that_fails_like_the_bug_is_told_apart_from_the_untouched_bug(tmp_path):
    """`out.detach().add_(x)`, one of the tempting fixes the residual notebook lists, fails every check as the
    bug does, with the same error and op. The participant's kernel sees its culprit line is not the report's,
    sends only that yes or no, and the projector says "a tried fix", not "the bug, unchanged"."""
    from autograder.intake.cells import marker_line
    from autograder.notebook.selfcheck import self_check
    from autograder.reference_store import known_submissions
    from autograder.workshop.client import payload
    from autograder.workshop.course import load
    from tests.test_workshop import workshop_server

    course = load()
    broken = known_submissions("residual_add").broken
    assert "out += x" in broken
    sent = {}
    for name, code in (("bug", broken), ("tried", broken.replace("out += x", "out.detach().add_(x)"))):
        found = self_check("residual_add", history=[f"{marker_line(1, 1)}\n{code}"], namespace={}, timeout=60)
        sent[name] = payload(found.result, found.report, None)
        assert "line" not in sent[name]  # the line itself stays in the kernel
    assert (sent["bug"]["changed"], sent["tried"]["changed"]) == (False, True)
    assert {k: v for k, v in sent["bug"].items() if k != "changed"} == \
        {k: v for k, v in sent["tried"].items() if k != "changed"}  # alike in everything else
    with workshop_server(tmp_path, "--exercises", "residual_add") as server:
        for name in ("bug", "tried", "tried"):
            person = server.join()
            body = {**sent[name], "pseudonym": person.name, "secret": person.secret}
            assert server.post("report", body)[0] == 200
        _, data = server.state()
    labels = {m["label"]: m["participants"] for m in data["misconceptions"]}
    assert labels == {"the bug, unchanged": 1, course.tried["residual_add"][1].label: 2}


def test_every_wrong_answer_has_words_written_for_it_and_every_written_label_is_reached(built):
    """What the projector says of a wrong answer is its cause, written for that label: never a list of the
    checks it fails (the bug's own group, 'like the starting code', aside). Each written explanation names
    an answer of the catalogue, and that answer's run lands in the group that shows it: words nobody's
    answer would show are caught."""
    from autograder.feedback.wording import say

    fallback = say("workshop: fails", fails="")
    for exercise, entry in built["exercises"].items():
        for m in entry["misconceptions"]:
            if not m["label"].startswith(misconceptions.BUG):
                assert not m["explanation"].startswith(fallback[:8]), (exercise, m["label"])
    for (exercise, name), written in misconceptions.LABELS.items():
        shown = [m for m in built["exercises"][exercise]["misconceptions"] if m["explanation"] == written.text]
        assert shown, (exercise, name)
        assert any(name in m["label"] or "more that fail alike" in m["label"] for m in shown), (exercise, name)
