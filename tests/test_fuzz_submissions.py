"""Property-based fuzzing of what a class folder can hold: whatever the files and their names, a batch ends
with exactly one verdict per file, every status a known one, never a grader_error (a fault of ours), and a
gradebook with one row per file.

The code under test is never run: the runner is a fake that reports without running anything, so an
example costs milliseconds and the fuzzer stays on what it attacks (reading, parsing, naming, writing).
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.batch import Preparations, Settings, grade_batch
from autograder.core.outcome import RunReport
from autograder.core.result import Result
from autograder.core.status import Status
from autograder.exercises import EXERCISES
from autograder.intake.discover import SUFFIXES

FUZZ = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
_REFERENCES: dict[str | None, Preparations] = {}


class NotRun:
    """A runner that runs nothing: every file that gets this far is graded on an empty report."""

    def run(self, job):
        return RunReport(problems={"x": "not run"})


def references(settings: Settings) -> Preparations:
    """One Preparations per setting for the whole module (each exercise's reference is made once)."""
    if settings.exercise not in _REFERENCES:
        _REFERENCES[settings.exercise] = Preparations(settings)
    return _REFERENCES[settings.exercise]


# ---- strategies --------------------------------------------------------------------------------------------

ODD = ["\ud800", "\udfff", "\udcff", "\x00", "=HYPERLINK(\"http://x\",\"y\")", "+1", "-1", "@SUM(A1)", "\r", "\t",
       "answer", "residual_add", "data_trap", "no_such_exercise", "", " ", "%timeit 1", "!ls"]
text = st.one_of(st.text(st.characters(exclude_categories=()), max_size=12), st.sampled_from(ODD))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), text)
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(text, inner, max_size=4)), max_leaves=12)
exercise_ids = st.one_of(st.sampled_from([*EXERCISES, "no_such_exercise", "=1+1", "\ud800"]), json_values)


@st.composite
def metadata(draw, valid: bool):
    """Notebook metadata with `autograder` and `autograder.exercise` of any JSON type (the whole of it too,
    unless `valid`)."""
    shapes = ["autograder", "exercise", "exercise", "exercise"] + ([] if valid else ["any"])
    shape = draw(st.sampled_from(shapes))
    if shape == "any":
        return draw(json_values)
    extra = draw(st.dictionaries(text.filter(lambda k: k != "autograder"), json_values, max_size=2))
    if shape == "autograder":
        return {**extra, "autograder": draw(json_values)}
    inner = {**draw(st.dictionaries(text, json_values, max_size=2)), "exercise": draw(exercise_ids)}
    return {**extra, "autograder": inner}


sources = st.one_of(text, st.lists(text, max_size=3), st.sampled_from(["x = 1", "%timeit 1\nx = 1", "def f(:"]))
tags = st.lists(st.one_of(st.just("answer"), text.filter(lambda t: "," not in t and t)), max_size=3, unique=True)


@st.composite
def cells(draw, valid: bool):
    """A cell as the v4.5 schema has it (`valid`), or with any of its fields of any type."""
    kind = draw(st.sampled_from(["code", "code", "markdown", "raw"] + ([] if valid else ["junk"])))
    answer = kind == "code" and draw(st.integers(0, 2)) > 0
    cell = {"cell_type": kind, "id": "",  # made unique by notebooks()
            "metadata": {"tags": ["answer"] if answer else draw(tags)} if answer or draw(st.booleans()) else {},
            "source": draw(sources)}
    if kind == "code":
        cell["outputs"] = draw(st.lists(st.fixed_dictionaries(
            {"output_type": st.just("stream"), "name": st.just("stdout"), "text": text}), max_size=2))
        cell["execution_count"] = draw(st.one_of(st.none(), st.integers(0, 100)))
    if not valid:
        for key in draw(st.lists(st.sampled_from(sorted(cell)), max_size=2, unique=True)):
            if draw(st.booleans()):
                del cell[key]
            else:
                cell[key] = draw(json_values)
    return cell


@st.composite
def notebooks(draw):
    """Valid-notebook skeletons (nbformat 4.5) with fuzzed metadata and answer cells, made invalid one time in
    four (a field dropped, or replaced with any JSON value)."""
    valid = draw(st.integers(0, 3)) > 0
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": draw(metadata(valid)),
          "cells": draw(st.lists(cells(valid), min_size=int(valid), max_size=4))}
    for i, cell in enumerate(nb["cells"]):
        if isinstance(cell, dict) and "id" in cell and cell["id"] == "":
            cell["id"] = f"cell-{i}"
    if not valid and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(nb)))
        if draw(st.booleans()):
            del nb[key]
        else:
            nb[key] = draw(json_values)
    return nb


def encode(value: object, how: str) -> bytes:
    if how == "ascii":
        return json.dumps(value).encode()
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")  # lone surrogates: not UTF-8


contents = st.one_of(
    st.builds(encode, notebooks(), st.sampled_from(["ascii", "ascii", "raw"])),
    st.builds(encode, json_values, st.sampled_from(["ascii", "raw"])),
    st.binary(max_size=64),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=40).map(str.encode),
    st.sampled_from([b"", b"  \n", b"[" * 50_000, b'{"n": ' + b"9" * 5000 + b"}", b"x = 1\n", b"def f(:\n"]),
)


def valid_name(name: str) -> bool:
    """A name a Linux file system takes (one component, at most 255 bytes)."""
    if not name or name in (".", "..") or "/" in name or "\x00" in name:
        return False
    try:
        return len(os.fsencode(name)) <= 255
    except UnicodeEncodeError:  # a surrogate that is not an undecodable byte
        return False


stems = st.one_of(st.text(st.characters(exclude_categories=()), min_size=1, max_size=20),
                  st.sampled_from(["a b", "a_b", "a@b", "a\tb", "a__b", "a_b-2", "-a", "=a", "+a", "\udcff",
                                   "03_residual_add", "data_trap ada", "data_trap_ada", "é", "e\u0301"]))
names = st.builds(lambda stem, suffix: stem + suffix, stems,
                  st.sampled_from([".py", ".py", ".ipynb", ".ipynb", ".txt", ""])).filter(valid_name)
exercise_settings = st.sampled_from([Settings(exercise="residual_add", timeout=5), Settings(exercise=None, timeout=5)])


# ---- the property ------------------------------------------------------------------------------------------


def check_batch(files: list[tuple[str, bytes]], settings: Settings) -> None:
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        for name, data in files:
            with open(os.fsencode(folder) + b"/" + os.fsencode(name), "wb") as f:
                f.write(data)
        graded = [name for name, _ in files if name.endswith(SUFFIXES) and not name.startswith(".")]
        out = Path(tmp) / "out"
        graded_now = grade_batch([folder], out, settings, NotRun(), preparations=references(settings))
        results = [r.to_json() for r in graded_now]
        assert len(results) == len(graded), ([r["submission"] for r in results], graded)
        submissions = [r["submission"] for r in results]
        assert len(set(submissions)) == len(submissions)
        for r in results:
            assert Result.from_json(r).status != Status.GRADER_ERROR, r  # every row reads back as a Result
            on_disk = json.loads((out / r["submission"] / "results.json").read_text(encoding="utf-8"))
            assert on_disk["status"] == r["status"]
        with open(out / "gradebook.csv", encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == len(graded)
        assert not any(v.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for v in row.values())


@FUZZ
@given(st.lists(contents, min_size=1, max_size=4), st.sampled_from([".ipynb", ".ipynb", ".py"]), exercise_settings)
def test_any_file_content_gets_one_verdict(datas, suffix, settings):
    check_batch([(f"s{i}{suffix}", data) for i, data in enumerate(datas)], settings)


@FUZZ
@given(notebooks(), exercise_settings)
def test_any_notebook_metadata_and_cells_get_one_verdict(nb, settings):
    check_batch([("nb.ipynb", encode(nb, "ascii")), ("03_residual_add.ipynb", encode(nb, "ascii"))], settings)


@FUZZ
@given(st.lists(names, min_size=1, max_size=6, unique_by=os.fsencode), st.lists(contents, min_size=1, max_size=2),
       exercise_settings)
def test_any_file_names_get_one_verdict_each(file_names, datas, settings):
    check_batch([(name, datas[i % len(datas)]) for i, name in enumerate(file_names)], settings)
