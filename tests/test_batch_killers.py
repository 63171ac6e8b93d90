"""Files that used to stop `autograder grade` (a traceback, no gradebook) or fool it (a link to the
solution scored 10/10). Each must end as that file's own verdict, beside an honest neighbour that still
passes, with every results.json valid JSON and a gradebook row per file.

The answer code here is trusted (the attacks are in the file format, in names and in what the grader
writes), so it runs in process (InProcessRunner).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import inspect
import io
import json
import os
import socket
import sys
import threading
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

from autograder.batch import Preparations, Settings, batch_gradebook_csv, grade_batch, previous_result
from autograder.bundle import grader
from autograder.bundle.config import BundleConfig
from autograder.core.result import Result
from autograder.core.status import Status
from autograder.intake.submission import MAX_BYTES
from autograder.platforms import gradescope
from autograder.reports import gradebook as student_gradebook
from autograder.reports.graded import Graded
from autograder.runner import InProcessRunner
from tests.conftest import solution_code

SETTINGS = Settings(exercise="residual_add", timeout=20)
HONEST = "honest.py"
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture(scope="module")
def references():
    """One reference per exercise for the whole module: the attacks differ, the hidden inputs do not."""
    return Preparations(SETTINGS)


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "class"
    d.mkdir()
    (d / HONEST).write_text(solution_code("residual_add"))
    return d


@pytest.fixture
def outside(tmp_path):
    """The teacher's files, outside the class folder: the solution a link would steal."""
    d = tmp_path / "teacher"
    d.mkdir()
    (d / "solution.py").write_text(solution_code("residual_add"))
    return d


class PrintingRunner(InProcessRunner):
    """In process, keeping what the answer printed, as a worker does."""

    def run(self, job):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            report = super().run(job)
        return replace(report, stdout=printed.getvalue())


def grade(folder: Path, references, *, paths=None, settings=SETTINGS, runner=None, expect=None) -> dict[str, dict]:
    """Grades the folder (or `paths`), checks what every batch must leave behind; results by submission."""
    out = folder.parent / "out"
    results = [r.to_json() for r in grade_batch(paths or [folder], out, settings, runner or InProcessRunner(),
                                                preparations=references)]
    names = [r["submission"] for r in results]
    assert len(names) == len(set(names)), names
    for r in results:
        assert Result.from_json(r).status != Status.GRADER_ERROR, r  # every row reads back as a Result
        assert r["output"].strip()
        on_disk = json.loads((out / r["submission"] / "results.json").read_text(encoding="utf-8"))
        assert on_disk["status"] == r["status"] and on_disk["submission"] == r["submission"]
    rows = list(csv.DictReader((out / "gradebook.csv").open(encoding="utf-8", newline="")))
    assert len(rows) == len(results)
    for row in rows:
        assert not any(cell.startswith(FORMULA_START) for cell in row.values()), row
    by_name = {r["submission"]: r for r in results}
    if HONEST in by_name:
        assert by_name[HONEST]["status"] == "passed" and by_name[HONEST]["score"] == 10, by_name[HONEST]["output"]
    if expect is not None:
        assert set(by_name) - {HONEST} == set(expect)
        for name, (status, words) in expect.items():
            assert by_name[name]["status"] == status, (name, by_name[name]["output"])
            assert words in by_name[name]["output"], (name, by_name[name]["output"])
    return by_name


def notebook(code: str = "", exercise: object = "residual_add", metadata: object = None) -> dict:
    """A notebook as plain JSON, one answer cell holding `code`, `metadata` replacing the whole of it."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(code or solution_code("residual_add"))
    cell.metadata["tags"] = ["answer"]
    nb.cells = [cell]
    nb.metadata["autograder"] = {"exercise": exercise}
    data = json.loads(json.dumps(nb))
    if metadata is not None:
        data["metadata"] = metadata
    return data


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")  # ensure_ascii: a lone surrogate is written \\ud800


# ---- the file's content ------------------------------------------------------------------------------------


def test_json_nested_too_deeply_for_the_parser(folder, references):
    (folder / "deep.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "deep_object.ipynb").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    grade(folder, references, expect={"deep.ipynb": ("malformed", "nested too deeply"),
                                      "deep_object.ipynb": ("malformed", "nested too deeply")})


def test_an_integer_too_long_to_convert(folder, references):
    (folder / "digits.ipynb").write_text('{"cells": [], "metadata": {}, "n": ' + "7" * 5000 + "}")
    grade(folder, references, expect={"digits.ipynb": ("malformed", "not valid notebook JSON")})


@pytest.mark.parametrize("metadata", [
    {"autograder": "residual_add"},
    {"autograder": ["residual_add"]},
    {"autograder": 3},
    {"autograder": {"exercise": ["residual_add"]}},
    {"autograder": {"exercise": {"id": "residual_add"}}},
    {"autograder": {"exercise": 7}},
    {"autograder": {"exercise": None}},
    {"autograder": {"exercise": ""}},
])
def test_metadata_of_the_wrong_type_is_ignored_and_the_file_graded_as_asked(folder, references, metadata):
    write_json(folder / "meta.ipynb", notebook(metadata=metadata))
    grade(folder, references, expect={"meta.ipynb": ("passed", "Every check passed")})


@pytest.mark.parametrize("metadata", ["residual_add", ["residual_add"], 3])
def test_notebook_metadata_that_is_not_an_object(folder, references, metadata):
    write_json(folder / "meta.ipynb", notebook(metadata=metadata))
    grade(folder, references, expect={"meta.ipynb": ("malformed", "not a valid notebook")})


def test_wrong_typed_metadata_without_exercise_says_what_is_missing(folder, references):
    write_json(folder / "meta.ipynb", notebook(metadata={"autograder": ["residual_add"]}))
    (folder / HONEST).unlink()
    by_name = grade(folder, references, settings=replace(SETTINGS, exercise=None))
    assert by_name["meta.ipynb"]["status"] == "malformed"
    assert "--exercise" in by_name["meta.ipynb"]["output"]


def test_lone_surrogates_in_metadata_cells_and_outputs(folder, references):
    nb = notebook(exercise="\ud800")
    write_json(folder / "meta_surrogate.ipynb", nb)
    nb = notebook()
    nb["cells"][0]["source"] = "x = '\ud800'\n" + solution_code("residual_add")
    write_json(folder / "source_surrogate.ipynb", nb)
    nb = notebook()
    nb["cells"].append({"cell_type": "code", "id": "other", "metadata": {"tags": ["\udfff"]}, "source": "'\udc80'",
                        "execution_count": 1,
                        "outputs": [{"output_type": "stream", "name": "stdout", "text": "\ud800\n"}]})
    write_json(folder / "output_surrogate.ipynb", nb)
    grade(folder, references, expect={
        "meta_surrogate.ipynb": ("malformed", "'\\ud800'"),
        "source_surrogate.ipynb": ("malformed", "lone surrogate"),
        "output_surrogate.ipynb": ("passed", "Every check passed"),  # not graded: only its answer cells are
    })


def test_lone_surrogates_in_an_error_message_and_in_printed_output(folder, references):
    (folder / "raises.py").write_text(solution_code("residual_add") + "\nraise ValueError('bad \\ud800 input')\n")
    (folder / "prints.py").write_text(solution_code("residual_add") + "\nprint('\\udcff printed')\n")
    by_name = grade(folder, references, runner=PrintingRunner(), expect={
        "raises.py": ("failed", "ValueError"),
        "prints.py": ("passed", "Every check passed"),
    })
    assert "bad \ufffd input" in by_name["raises.py"]["output"]
    assert by_name["prints.py"]["teacher_stdout"] == "\ufffd printed\n"


def test_a_file_name_that_is_not_utf8(folder, references):
    fd = os.open(os.fsencode(folder) + b"/bad\xff.py", os.O_WRONLY | os.O_CREAT, 0o644)
    os.close(fd)  # empty: its verdict's message names the file, undecodable byte and all
    by_name = grade(folder, references, expect={"bad_.py": ("malformed", "is empty")})
    assert "\ufffd" in by_name["bad_.py"]["output"] and by_name["bad_.py"]["submission_path"].endswith("bad\ufffd.py")


@pytest.mark.parametrize("content", ["", "   \n\t\n"])
def test_an_empty_py_file_is_malformed(folder, references, content):
    (folder / "empty.py").write_text(content)
    grade(folder, references, expect={"empty.py": ("malformed", "is empty")})


@pytest.mark.parametrize("name", ["huge.py", "huge.ipynb"])
def test_a_file_larger_than_the_bound_is_not_read(folder, references, name):
    with open(folder / name, "wb") as f:
        f.truncate(MAX_BYTES + 1)  # sparse: costs no disk
    grade(folder, references, expect={name: ("malformed", "larger than 20 MB")})


def test_a_file_at_the_bound_is_read(folder, references):
    code = solution_code("residual_add")
    (folder / "padded.py").write_text(code + "#" * (MAX_BYTES - len(code.encode())))
    grade(folder, references, expect={"padded.py": ("passed", "Every check passed")})


def test_metadata_naming_another_exercise_than_asked(folder, references):
    write_json(folder / "other.ipynb", notebook(exercise="data_trap"))
    write_json(folder / "unknown.ipynb", notebook(exercise="no_such_exercise"))
    by_name = grade(folder, references, expect={"other.ipynb": ("malformed", "exercise 'data_trap'"),
                                                "unknown.ipynb": ("malformed", "'no_such_exercise'")})
    for name in ("other.ipynb", "unknown.ipynb"):
        assert "exercise residual_add was asked for" in by_name[name]["output"]
        assert by_name[name]["exercise"] == "residual_add" and by_name[name]["max_score"] == 10


# ---- the gradebook -----------------------------------------------------------------------------------------


def test_spreadsheet_formulas_stay_text_in_the_gradebook(folder, references):
    write_json(folder / "formula.ipynb", notebook(exercise='=HYPERLINK("http://evil.example","click")'))
    (folder / "-cmd.py").write_text("x = 1\n")
    (folder / "+1.py").write_text("x = 1\n")
    (folder / HONEST).rename(folder / "residual_add_honest.py")  # its name says which exercise it is
    by_name = grade(folder, references, settings=replace(SETTINGS, exercise=None))  # the formula is not overridden
    assert by_name["residual_add_honest.py"]["status"] == "passed"
    assert by_name["formula.ipynb"]["status"] == "malformed"
    assert "HYPERLINK" in by_name["formula.ipynb"]["output"]
    rows = list(csv.DictReader((folder.parent / "out" / "gradebook.csv").open(encoding="utf-8", newline="")))
    assert "'-cmd.py" in {r["submission"] for r in rows}


def test_gradebook_cells_are_escaped_and_numbers_kept():
    rows = list(csv.DictReader(io.StringIO(batch_gradebook_csv([
        Result("=1+1", "-a.py", Status.FAILED, 3, 10, "", execution_time=1.234),
        Result("+x\ud800", "\tb.py", Status.MALFORMED, 0, 10, ""),
        Result("residual_add", "\rc.py", Status.PASSED, 10, 10, ""),
    ]))))
    assert [r["submission"] for r in rows] == ["'-a.py", "'\tb.py", "'\nc.py"]  # a CR would have split the row
    assert [r["exercise"] for r in rows] == ["'=1+1", "'+x\ufffd", "residual_add"]
    assert [r["status"] for r in rows] == ["failed", "malformed", "passed"]
    assert [(r["score"], r["max_score"]) for r in rows] == [("3", "10"), ("0", "10"), ("10", "10")]
    assert rows[0]["execution_time"] == "1.23" and rows[0]["results"] == "'-a.py/results.json"


def test_lms_gradebook_cells_are_escaped_too():
    graded = [Graded("-x.py", "=cmd|' /C calc'!A0", Result("residual_add", "-x.py", Status.PASSED, 10, 10, "")),
              Graded("y.py", "bob", Result("@evil", "y.py", Status.FAILED, 1, 10, ""))]
    rows = list(csv.reader(io.StringIO(student_gradebook.student_gradebook_csv(student_gradebook.gradebook(graded)))))
    assert rows[0] == ["student", "residual_add", "'@evil", "total"]
    assert {r[0] for r in rows[1:]} == {"'=cmd|' /C calc'!A0", "bob"}


# ---- names -------------------------------------------------------------------------------------------------


def test_names_that_clean_to_the_same_name_are_made_unique(folder, references):
    (folder / "a_b.py").write_text(solution_code("residual_add"))
    (folder / "a b.py").write_text("x = 1\n")
    (folder / "a@b.py").write_text("")
    (folder / "a_b-2.py").write_text(solution_code("residual_add"))  # a name a suffix would have taken
    by_name = grade(folder, references, expect={
        "a_b.py": ("passed", "Every check passed"),
        "a_b-2.py": ("passed", "Every check passed"),
        "a_b-3.py": ("failed", "not defined"),
        "a_b-4.py": ("malformed", "is empty"),
    })
    assert by_name["a_b-3.py"]["submission_path"].endswith("a b.py")
    assert by_name["a_b-4.py"]["submission_path"].endswith("a@b.py")


def test_the_same_file_name_in_two_folders_given_on_the_command_line(tmp_path, references):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "sub.py").write_text(solution_code("residual_add") if d == "a" else "")
    by_name = grade(tmp_path / "a", references, paths=[tmp_path / "b", tmp_path / "a"], expect={
        "sub.py": ("passed", "Every check passed"), "sub-2.py": ("malformed", "is empty")})
    assert by_name["sub.py"]["submission_path"] == str(tmp_path / "a" / "sub.py")  # sorted path order


def test_a_very_long_path_gets_a_short_name(folder, references):
    deep = folder
    for i in range(4):
        deep = deep / (f"{i}" * 200)
    deep.mkdir(parents=True)
    (deep / ("x" * 200 + ".py")).write_text("")
    by_name = grade(folder, references)
    (long_name,) = set(by_name) - {HONEST}
    assert len(long_name) <= 160 and long_name.endswith(".py") and by_name[long_name]["status"] == "malformed"


def test_folders_nested_deeper_than_python_recurses(folder, references):
    """Walking a folder 300 deep under a recursion limit 200 frames above this test's depth (a deeper tree,
    for the default limit, would be more than shutil.rmtree could clean up)."""
    (folder / HONEST).unlink()  # no code runs here: only the walk and the writing use the stack
    deep = folder
    for _ in range(300):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "x.py").write_text("")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + 200)
    try:
        by_name = grade(folder, references)
    finally:
        sys.setrecursionlimit(limit)
    (deep_name,) = by_name
    assert by_name[deep_name]["status"] == "malformed" and "is empty" in by_name[deep_name]["output"]


@pytest.mark.slow
def test_cli_grades_colliding_names_and_writes_the_gradebook(folder, tmp_path):
    """`autograder grade` used to refuse the whole batch (exit 2) when two names collided."""
    from autograder.cli import main

    (folder / "a b.py").write_text(solution_code("residual_add"))
    (folder / "a_b.py").write_text("x = 1\n")
    out = tmp_path / "grades"
    code = main(["grade", str(folder), "--exercise", "residual_add", "--out", str(out), "--no-sandbox",
                 "--jobs", "1", "--timeout", "60", "--device", "cpu", "--quiet"])
    assert code == 0
    rows = {r["submission"]: r for r in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}
    assert set(rows) == {HONEST, "a_b.py", "a_b-2.py"}
    assert rows["a_b-2.py"]["status"] == "passed" and rows["a_b.py"]["status"] == "failed"


def test_results_inside_the_class_folder_are_not_submissions(folder, references):
    """--out inside the class folder: its `honest.py/` result folders are neither graded nor reported, in
    this run or the next, nor those of an earlier run with another --out."""
    (folder / "dir.py").mkdir()  # a folder named like a submission, holding no results: reported
    for out in (folder / "out", folder / "out", folder / "other_out"):
        results = grade_batch([folder], out, SETTINGS, InProcessRunner(), preparations=references)
        assert {r.submission: r.status for r in results} == {HONEST: "passed", "dir.py": "malformed"}


# ---- links and special files -------------------------------------------------------------------------------


def test_a_link_to_the_solution_is_not_followed(folder, outside, references):
    (folder / "stolen.py").symlink_to(outside / "solution.py")
    (folder / "gone.py").symlink_to(outside / "no_such_file.py")
    (folder / "zero.py").symlink_to("/dev/zero")
    by_name = grade(folder, references, expect={name: ("malformed", "is a link, not a file")
                                                for name in ("stolen.py", "gone.py", "zero.py")})
    assert by_name["stolen.py"]["score"] == 0


def test_linked_folders_are_not_walked(folder, outside, references):
    (folder / "ada").symlink_to(outside)  # not named like a submission: skipped, never entered
    (folder / "bob.py").symlink_to(outside)  # named like one: its own verdict
    (folder / "loop").symlink_to(folder)
    grade(folder, references, expect={"bob.py": ("malformed", "is a link, not a file")})


def test_a_link_named_on_the_command_line_is_not_followed(folder, outside, references):
    link = folder.parent / "cmdline.py"
    link.symlink_to(outside / "solution.py")
    grade(folder, references, paths=[folder, link],
          expect={"cmdline.py": ("malformed", "is a link, not a file")})


def test_a_fifo_is_refused_without_hanging(folder, references):
    os.mkfifo(folder / "pipe.py")
    os.mkfifo(folder / "pipe.ipynb")
    grade(folder, references, expect={"pipe.py": ("malformed", "not a regular file (a FIFO"),
                                      "pipe.ipynb": ("malformed", "not a regular file (a FIFO")})


@pytest.fixture
def unblock_fifo(request):
    """Opens each FIFO given for writing, every second after the first few, should a reader be blocked on
    it: a grader that opens a FIFO then fails this test instead of hanging the test run."""
    stop = threading.Event()
    paths: list[Path] = []

    def watchdog():
        if stop.wait(10):
            return
        while not stop.wait(1):
            for path in paths:
                with contextlib.suppress(OSError):
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    thread = threading.Thread(target=watchdog, daemon=True)
    thread.start()
    yield paths.append
    stop.set()


def test_a_fifo_named_on_the_command_line_is_refused(folder, references, unblock_fifo):
    fifo = folder.parent / "cmdline.ipynb"
    os.mkfifo(fifo)
    unblock_fifo(fifo)
    grade(folder, references, paths=[folder, fifo],
          expect={"cmdline.ipynb": ("malformed", "not a regular file (a FIFO")})


def test_a_folder_and_a_socket_named_like_submissions(folder, references):
    (folder / "dir.py").mkdir()
    (folder / "dir.py" / "inner.py").write_text("")  # a real folder is still searched
    expect = {"dir.py": ("malformed", "not a regular file (a folder)"), "dir.py__inner.py": ("malformed", "is empty")}
    sock = socket.socket(socket.AF_UNIX)
    try:
        try:
            sock.bind(str(folder / "s.py"))
            expect["s.py"] = ("malformed", "not a regular file (a socket)")
        except OSError:  # a path too long for a socket's address: the folder cases still run
            pass
        grade(folder, references, expect=expect)
    finally:
        sock.close()


# ---- resuming ----------------------------------------------------------------------------------------------


GARBAGE = [
    "[1, 2, 3]",
    '"a string"',
    "null",
    "{",
    "[" * 100_000,
    '{"submission_sha256": "SHA"}',
    '{"submission_sha256": "SHA", "status": "passed", "score": "ten", "max_score": 10, "exercise": "residual_add",'
    ' "submission": "honest.py", "output": "", "tests": [], "devices": ["cpu"], "execution_time": 0}',
    '{"submission_sha256": "SHA", "status": "passed", "score": 10, "max_score": 10, "exercise": "residual_add",'
    ' "submission": "honest.py", "output": "", "tests": "all of them", "devices": ["cpu"], "execution_time": 0}',
    '{"submission_sha256": "SHA", "status": "passed", "score": 10, "max_score": 10, "exercise": "residual_add",'
    ' "submission": "honest.py", "output": "", "tests": [{"name": 1}], "devices": ["cpu"], "execution_time": 0}',
    '{"submission_sha256": "SHA", "status": "perfect", "score": 10, "max_score": 10, "exercise": "residual_add",'
    ' "submission": "honest.py", "output": "", "tests": [], "devices": ["cpu"], "execution_time": 0}',
    '{"submission_sha256": "SHA", "status": ["passed"], "score": 10, "max_score": 10, "exercise": ["x"],'
    ' "submission": {}, "output": 3, "tests": [], "devices": ["cpu"], "execution_time": 0}',
    '{"submission_sha256": "SHA", "status": "passed", "score": 10, "max_score": 10, "exercise": "residual_add",'
    ' "submission": "someone_else.py", "output": "", "tests": [], "devices": ["cpu"], "execution_time": 0}',
    # each wrong in one field only: a score above its maximum, no devices, printed output that is not text
    '{"submission_sha256": "SHA", "status": "passed", "score": 1e308, "max_score": 10, "exercise": "residual_add",'
    ' "submission": "honest.py", "output": "", "tests": [], "devices": ["cpu"], "execution_time": 0}',
    '{"submission_sha256": "SHA", "status": "passed", "score": 10, "max_score": 10, "exercise": "residual_add",'
    ' "submission": "honest.py", "output": "", "tests": [], "execution_time": 0}',
    '{"submission_sha256": "SHA", "status": "passed", "score": 10, "max_score": 10, "exercise": "residual_add",'
    ' "submission": "honest.py", "output": "", "tests": [], "devices": ["cpu"], "execution_time": 0, "stdout": {}}',
]


@pytest.mark.parametrize("garbage", GARBAGE, ids=range(len(GARBAGE)))
def test_resume_regrades_whatever_garbage_an_old_results_json_holds(folder, references, garbage):
    digest = hashlib.sha256((folder / HONEST).read_bytes()).hexdigest()
    old = folder.parent / "out" / HONEST / "results.json"
    old.parent.mkdir(parents=True)
    old.write_text(garbage.replace("SHA", digest))
    assert previous_result(old, digest, HONEST) is None
    grade(folder, references)  # regraded: the honest file passes again
    assert json.loads(old.read_text())["status"] == "passed"


def test_the_recorded_hash_is_of_the_bytes_graded(folder, references, monkeypatch):
    """Each submission is read once: the file replaced right after that read (a student uploading again while
    the batch runs) changes neither what is graded nor the SHA-256 recorded, which is of the bytes graded; so
    the rerun sees the new file as new and grades it."""
    from autograder.intake import submission

    real = submission.read_bounded
    reads: list[str] = []

    def read_then_replace(path, limit):
        raw = real(path, limit)
        reads.append(Path(path).name)
        Path(path).write_text("x = 1\n")  # the file now holds another answer, which would fail
        return raw

    graded_bytes = (folder / HONEST).read_bytes()
    monkeypatch.setattr(submission, "read_bounded", read_then_replace)
    out = folder.parent / "out"
    (result,) = grade_batch([folder], out, SETTINGS, InProcessRunner(), preparations=references)
    monkeypatch.undo()
    assert reads == [HONEST]  # one read
    assert result.status == Status.PASSED  # the bytes read were graded
    on_disk = json.loads((out / HONEST / "results.json").read_text())
    assert on_disk["submission_sha256"] == hashlib.sha256(graded_bytes).hexdigest() == result.source.sha256
    (again,) = grade_batch([folder], out, SETTINGS, InProcessRunner(), preparations=references)
    assert again.status == Status.FAILED  # the replaced file is not taken as graded already


def test_resume_reuses_a_good_result_and_never_a_link(folder, outside, references):
    grade(folder, references)
    out = folder.parent / "out"
    seen = []
    grade_batch([folder], out, SETTINGS, InProcessRunner(), preparations=references,
                on_done=lambda name, data, reused: seen.append((name, reused)))
    assert seen == [(HONEST, True)]
    (out / HONEST / "results.json").unlink()
    (out / HONEST / "results.json").symlink_to(outside / "solution.py")  # a planted link is not read
    digest = hashlib.sha256((folder / HONEST).read_bytes()).hexdigest()
    assert previous_result(out / HONEST / "results.json", digest, HONEST) is None


# ---- the grader's own faults -------------------------------------------------------------------------------


def test_an_exception_anywhere_in_grade_file_is_that_files_grader_error(folder, references, monkeypatch):
    from autograder import batch

    real = batch.answer_code

    def answer_code(path):
        if Path(path).name == "victim.py":
            raise RuntimeError("a bug in reading")
        return real(path)

    class Runner(InProcessRunner):
        def run(self, job):
            if "BOOM" in job.code:
                raise ZeroDivisionError("a bug in running")
            return super().run(job)

    monkeypatch.setattr(batch, "answer_code", answer_code)
    (folder / "victim.py").write_text("x = 1\n")
    (folder / "boom.py").write_text("BOOM = 1\n")
    out = folder.parent / "out"
    graded = grade_batch([folder], out, SETTINGS, Runner(), preparations=references)
    results = {r.submission: r.to_json() for r in graded}
    assert results[HONEST]["status"] == "passed"
    for name, words in (("victim.py", "a bug in reading"), ("boom.py", "a bug in running")):
        assert results[name]["status"] == "grader_error" and words in results[name]["output"]
        assert results[name]["score"] == 0 and words in results[name]["grader_traceback"]
        assert json.loads((out / name / "results.json").read_text())["status"] == "grader_error"
    assert len(list(csv.DictReader((out / "gradebook.csv").open()))) == 3


def test_a_worker_that_raises_still_leaves_a_gradebook(folder, references, monkeypatch):
    from autograder import batch

    real = batch.grade_file

    def grade_file(path, name, *args, **kwargs):
        if name == "victim.py":
            raise OSError(28, "No space left on device")
        return real(path, name, *args, **kwargs)

    monkeypatch.setattr(batch, "grade_file", grade_file)
    (folder / "victim.py").write_text("x = 1\n")
    out = folder.parent / "out"
    results = {r.submission: r.to_json() for r in grade_batch([folder], out, SETTINGS, InProcessRunner(), jobs=2,
                                                        preparations=references)}
    assert results["victim.py"]["status"] == "grader_error" and "No space left" in results["victim.py"]["output"]
    assert results[HONEST]["status"] == "passed"
    rows = {r["submission"]: r["status"] for r in csv.DictReader((out / "gradebook.csv").open())}
    assert rows == {HONEST: "passed", "victim.py": "grader_error"}


# ---- Gradescope --------------------------------------------------------------------------------------------


class _InProcess(InProcessRunner):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def test_gradescope_with_an_unknown_exercise_in_the_metadata_writes_a_malformed_result(tmp_path, monkeypatch):
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "source" / "autograder_config.json").write_text(BundleConfig(("residual_add",), timeout=20).to_json())
    (root / "submission").mkdir()
    write_json(root / "submission" / "03_residual_add.ipynb", notebook(exercise="no_such_exercise\ud800"))
    monkeypatch.setattr("autograder.bundle.container.make_runner", lambda config: _InProcess())
    assert grader.run(gradescope.PLATFORM, root, argparse.Namespace()) == 0
    data = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert data["score"] == 0 and data["extra_data"]["exercises"][0]["status"] == "malformed"
    assert "no_such_exercise" in data["output"] and "residual_add was asked for" in data["output"]
