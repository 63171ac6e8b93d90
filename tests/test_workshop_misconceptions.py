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
