"""HTML feedback: pure functions of results.json files, tested on results built here (no grading processes),
then opened in headless Chromium. The gradebooks for an LMS are in test_lms.py."""

import csv
import hashlib
import io
import json
import os
import random
import re
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from autograder import cli as autograder_cli
from autograder.core.result import Cause, Result, TestResult
from autograder.core.status import Status
from autograder.exercises import EXERCISES
from autograder.reports.analysis import root_cause, tampering
from autograder.reports.gradebook import gradebook, student_gradebook_csv
from autograder.reports.graded import Graded, load, scan, student_of
from autograder.reports.html import write_report
from autograder.reports.pages import submission_page
from tests.browser import CHROMIUM, open_browser, serve, visit

ATTACK = '<script>window.__pwned = 1; console.error("pwned")</script><img src=x onerror="window.__pwned = 2">'
SECRETS = ("SECRET-HIDDEN-DESCRIPTION", "SECRET-STDOUT", "SECRET-TRACEBACK")
STUDENT_CODE = "import torch\n\ndef normalized_linear(x, weight):  # <b>bold</b>\n    weight /= weight.norm()\n" \
               "    return x @ weight.T\n"
HOSTILE = '<img src=x onerror="window.__pwned = 3">'
SHARED = ("What it means: PyTorch saved a tensor during the forward pass because backward needs it, and something "
          "changed that tensor in place before backward ran.")


def results_json(folder: Path, name: str, result: Result, path: Path | None = None, **extra) -> dict:
    data = result.to_json()
    data.update(submission=name, **extra)
    if path is not None:
        data["submission_path"] = str(path)
        data["submission_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (folder / name).mkdir(parents=True)
    (folder / name / "results.json").write_text(json.dumps(data))
    return data


DIV_ERROR = Cause("Your code raised RuntimeError at line 4 of your answer (`weight /= weight.norm()`).\nThe "
                  "in-place change: `div_` at line 4 (`weight /= weight.norm()`).", "RuntimeError", (4,),
                  "torch.Tensor.div_")


def checks(passed: bool, attack: bool = False) -> tuple[TestResult, ...]:
    message = "" if passed else "Backward failed: " + DIV_ERROR.text
    return (
        TestResult("forward", 3, 3, Status.PASSED, "", "visible", "The output equals the intended math."),
        TestResult("backward runs", 3 if passed else 0, 3, Status.PASSED if passed else Status.FAILED,
              message + (ATTACK if attack else ""), "visible", "backward runs", "Backward failed",
              "" if passed else "public/float32/cpu", None if passed else 0),
        TestResult("gradients", 4 if passed else 0, 4, Status.PASSED if passed else Status.FAILED,
              "" if passed else "Gradient: `grad weight` differs (in scenario 'batch', float32 on cpu).",
              "after_due_date", "SECRET-HIDDEN-DESCRIPTION", "Gradient: `grad weight` differs",
              "" if passed else "batch/float32/cpu"),
    )


def with_causes(result: Result) -> Result:
    """The result with the causes its checks point to (DIV_ERROR, SAME_ERROR)."""
    used = max((t.cause for t in result.tests if t.cause is not None), default=-1)
    return replace(result, causes=(DIV_ERROR, SAME_ERROR)[:used + 1] if used >= 0 else ())


SAME_ERROR = Cause(
    "Your code raised RuntimeError: one of the variables needed for gradient computation has been modified by an "
    "inplace operation: [torch.FloatTensor [2, 4]], which is output 0 of Relu, is at version 1; expected version 0 "
    f"instead.\n{SHARED}\nThe line that broke autograd: `torch.Tensor.add_` at line 3 (`out += x`) changed a tensor "
    "in place after `torch.relu` at line 2 (`out = x.relu()`) had saved it for backward.", "RuntimeError", (3,),
    "torch.Tensor.add_")


def same_error_checks() -> tuple[TestResult, ...]:
    """Three checks failing on one error (the grader gives them one Cause, whatever the tensor's shape)."""
    def error(scenario: str) -> str:
        return f"In scenario '{scenario}', float32 on cpu: {SAME_ERROR.text}"

    return (
        TestResult("forward", 2, 2, Status.PASSED, "", "visible", "forward"),
        TestResult("backward runs", 0, 1, Status.FAILED, "Backward failed. " + error("public"), "visible", "b",
              "Backward failed", "public/float32/cpu", 1),
        TestResult("gradients", 0, 3, Status.FAILED, error("train"), "after_due_date", "g", "", "train/float32/cpu", 1),
        TestResult("gradcheck", 0, 1, Status.FAILED, error("gradcheck"), "visible", "gc", "",
              "gradcheck/float64/cpu", 1),
    )


def result(exercise, status, score, tests=(), output=None, causes=None):
    made = Result(exercise, "", Status(status), score, 10, output or f"{score:g}/10 points.", tests)
    return with_causes(made) if causes is None else replace(made, causes=causes)


@pytest.fixture(scope="module")
def graded_dir(tmp_path_factory):
    """A graded folder as `autograder grade --out` writes it, for eight students."""
    root = tmp_path_factory.mktemp("graded")
    out = root / "grades"
    dan_file = root / "class" / "dan" / "02_data_trap.py"
    dan_file.parent.mkdir(parents=True)
    dan_file.write_text(STUDENT_CODE)
    results_json(out, "ada__06_data_trap.ipynb", result("data_trap", "passed", 10, checks(True)))
    results_json(out, "ada__01_residual_add.ipynb", result("residual_add", "passed", 10, checks(True)))
    results_json(out, "dan__06_data_trap.py", result("data_trap", "failed", 3, checks(False, attack=True)),
                 path=dan_file, stdout="SECRET-STDOUT " + ATTACK)
    results_json(out, "bob__06_data_trap.ipynb", result("data_trap", "not_attempted", 0, output="Not attempted."))
    results_json(out, "eve__01_residual_add.ipynb", result("residual_add", "grader_error", 0),
                 grader_traceback="SECRET-TRACEBACK")
    results_json(out, "eve__06_data_trap.ipynb", result("data_trap", "passed", 10, checks(True)))
    results_json(out, "data_trap_zed.py", result("data_trap", "malformed", 0, output="zed.py is empty."))
    results_json(out, "cleo__01_residual_add.ipynb", result("residual_add", "failed", 2, same_error_checks()))
    tamper = TestResult("forward", 0, 2, Status.FAILED, "Your code raised TamperError: your code replaced parts of "
                   "the grader or of torch (torch.Tensor.backward)", "visible", "forward", cause=0)
    results_json(out, "mallory__01_residual_add.ipynb", result("residual_add", "failed", 0, (tamper,), causes=(
        Cause(tamper.output, "TamperError", tampered=True),)))
    forged = "0/10 points. Your code crashed the process that ran it: the report did not come from the grader's harness"
    results_json(out, "trudy__06_data_trap.ipynb", result("data_trap", "crashed", 0, output=forged,
                                                          causes=(Cause(forged[13:], tampered=True),)))
    results_json(out, "Eve_Hack_7_assignsubmission_file_01_residual_add.ipynb",
                 result("residual_add", "passed", 10, checks(True)),
                 submission_path=f"moodle/{HOSTILE}_7_assignsubmission_file_01_residual_add.ipynb")
    return out


@pytest.fixture(scope="module")
def report(graded_dir):
    paths = write_report(graded_dir, graded_dir / "report", for_students=graded_dir / "handout")
    return paths["index"].parent


@pytest.mark.parametrize("data, student", [
    ({"submission": "ada__01_residual_add.ipynb", "exercise": "residual_add"}, "ada"),
    ({"submission": "ada__week1__x.py", "exercise": "residual_add"}, "ada"),
    ({"submission": "group-2__01_residual_add.ipynb", "exercise": "residual_add"}, "group-2"),  # a folder's name
    ({"submission": "data_trap_zed.py", "exercise": "data_trap"}, "zed"),
    ({"submission": "data_trap_zed-2.py", "exercise": "data_trap"}, "zed"),  # handed in again, or a name collision
    ({"submission": "02_data_trap-zed.py", "exercise": "data_trap"}, "zed"),
    ({"submission": "03_residual_add.ipynb", "exercise": "residual_add",
      "submission_path": "class/cleo/03_residual_add.ipynb"}, "cleo"),
    ({"submission": "03_residual_add.ipynb", "exercise": "residual_add"}, "(unknown)"),
    # Canvas's "Download Submissions": on time, late, handed in again
    ({"submission": "ada_12345_67890_01_residual_add.ipynb", "exercise": "residual_add"}, "ada"),
    ({"submission": "ada_LATE_12345_67891_01_residual_add.ipynb", "exercise": "residual_add"}, "ada"),
    ({"submission": "ada_12345_67892_01_residual_add-1.ipynb", "exercise": "residual_add"}, "ada"),
    ({"submission": "lovelaceada_12345_67890_01_residual_add.ipynb", "exercise": "residual_add",
      "submission_path": "canvas/lovelaceada_12345_67890_01_residual_add.ipynb"}, "lovelaceada"),
    # the first folder under the graded folder is whose, whatever lies below it (issue 29 §4): a download graded
    # from the folder above it is one "student", whom the roster does not know (grade the download itself)
    ({"submission": "canvas__lovelaceada_12345_67890_01_residual_add.ipynb", "exercise": "residual_add",
      "submission_path": "canvas/lovelaceada_12345_67890_01_residual_add.ipynb"}, "canvas"),
    ({"submission": "03_residual_add__lovelaceada_12345_67890_01_residual_add.ipynb", "exercise": "residual_add",
      "submission_path": "dl/03_residual_add/lovelaceada_12345_67890_01_residual_add.ipynb"}, "lovelaceada"),
    # Moodle's "Download all submissions", flat and in folders (its default); the path keeps the spaces
    ({"submission": "Ada_Lovelace_123_assignsubmission_file_01_residual_add.ipynb", "exercise": "residual_add",
      "submission_path": "dl/Ada Lovelace_123_assignsubmission_file_01_residual_add.ipynb"}, "Ada Lovelace"),
    ({"submission": "Ada_Lovelace_123_assignsubmission_file___01_residual_add.ipynb", "exercise": "residual_add",
      "submission_path": "dl/Ada Lovelace_123_assignsubmission_file_/03_residual_add.ipynb"}, "Ada Lovelace"),
    ({"submission": "Ada_Lovelace_123_assignsubmission_file_01_residual_add.ipynb", "exercise": "residual_add"},
     "Ada Lovelace"),
    # a student names her file after a classmate, the LMS's way: what the LMS set (its folder, its prefix) wins
    ({"submission": "Ada_Lovelace_123_assignsubmission_file___Bob_Smith_99_assignsubmission_file_x.ipynb",
      "exercise": "residual_add",
      "submission_path": "dl/Ada Lovelace_123_assignsubmission_file_/Bob Smith_99_assignsubmission_file_x.ipynb"},
     "Ada Lovelace"),
    ({"submission": "Ada_Lovelace_123_assignsubmission_file___bob_4242_9999_01_residual_add.ipynb",
      "exercise": "residual_add",
      "submission_path": "dl/Ada Lovelace_123_assignsubmission_file_/bob_4242_9999_01_residual_add.ipynb"},
     "Ada Lovelace"),
    ({"submission": "Ada_Lovelace_123_assignsubmission_file_Bob_Smith_99_assignsubmission_file_x.ipynb",
      "exercise": "residual_add",
      "submission_path": "dl/Ada Lovelace_123_assignsubmission_file_Bob Smith_99_assignsubmission_file_x.ipynb"},
     "Ada Lovelace"),
    ({"submission": "ada_12345_67890_bob_4242_9999_01_residual_add.ipynb", "exercise": "residual_add"}, "ada"),
])
def test_whose_submission(data, student):
    assert student_of(Result.from_json({**result(data["exercise"], "failed", 0).to_json(), **data})) == student


def test_one_student_one_row_whatever_the_lms_called_the_files(tmp_path):
    for name, score, status in (("ada_12345_67890_01_residual_add.ipynb", 4, "failed"),
                                ("ada_LATE_12345_67891_01_residual_add.ipynb", 9, "failed"),
                                ("ada_12345_67892_01_residual_add-1.ipynb", 7, "failed"),
                                ("ada_12345_67893_06_data_trap.ipynb", 10, "passed"),
                                ("smithjohn_111_1_06_data_trap.ipynb", 1, "failed"),
                                ("smithjohn_222_2_06_data_trap.ipynb", 2, "failed")):
        exercise = "data_trap" if "data_trap" in name else "residual_add"
        results_json(tmp_path, name, result(exercise, status, score))
    graded = load(tmp_path)
    assert {g.student for g in graded} == {"ada", "smithjohn (111)", "smithjohn (222)"}  # two Canvas users, one name
    assert [g.late for g in graded if g.student == "ada"] == [False, False, False, True]  # data_trap first
    (ada,) = [r for r in gradebook(graded).rows if r.student == "ada"]
    assert ada.cell("residual_add").score == 9 and ada.cell("residual_add").counted.late and ada.total == 19


def test_unreadable_results_are_skipped_and_said(tmp_path):
    results_json(tmp_path, "ada__01_residual_add.ipynb", result("residual_add", "passed", 10))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.json").write_text("{not json")
    (tmp_path / "link").mkdir()
    (tmp_path / "link" / "results.json").symlink_to(tmp_path / "ada__01_residual_add.ipynb" / "results.json")
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "results.json")  # would block a plain open() forever
    (tmp_path / "linked_folder").symlink_to(tmp_path / "ada__01_residual_add.ipynb")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "results.json").write_text('["not", "ours"]')
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "results.json").write_text('{"exercise": "x", "tests": [], "status": "<b>pwned</b>"}')
    graded, skipped = scan(tmp_path)
    assert [g.folder for g in graded] == ["ada__01_residual_add.ipynb"]
    assert sorted(line.split("/")[0] for line in skipped) == ["bad", "fifo", "link", "odd", "other"]
    assert any(line.startswith("odd/") and "(`submission`: missing)" in line for line in skipped)  # says why
    paths = write_report(tmp_path, tmp_path / "report")
    assert "5 results.json file(s) could not be read" in paths["index"].read_text()
    assert len([w for w in paths["warnings"] if w.startswith("skipped")]) == 5


def test_lms_gradebook_one_row_per_student(graded_dir):
    rows = list(csv.reader(io.StringIO(student_gradebook_csv(gradebook(load(graded_dir))))))
    assert rows[0] == ["student", "data_trap", "residual_add", "total"]  # course order, not file order
    table = {r[0]: r[1:] for r in rows[1:]}
    assert table["ada"] == ["10", "10", "20"]
    assert table["bob"] == ["0", "", "0"]
    assert table["dan"] == ["3", "", "3"]
    assert table["eve"] == ["10", "grader_error", "grader_error"]  # visibly not a number, and no partial total
    assert table["zed"] == ["0", "", "0"]
    assert table[HOSTILE] == ["", "10", "10"]


def test_several_files_count_the_latest_the_lms_says_else_none():
    """Never the best of several guesses (issue 29 §4): Canvas's names order a student's files (late after on
    time, `-2` after `-1`, then the later submission id), and the latest counts, whatever it scored; files that
    nothing orders (two in one student's folder) count none: the cell is malformed, naming them."""
    def canvas(name, score, status=Status.FAILED):
        late = "_LATE_" in name
        return Graded(name, "ada", Result("data_trap", name, status, score, 10, ""), "canvas", "1001", late)

    (row,) = gradebook([canvas("ada_1001_5001_x.ipynb", 9), canvas("ada_1001_5002_x-1.ipynb", 3),
                        canvas("ada_1001_5000_x-2.ipynb", 5)]).rows
    assert row.cell("data_trap").score == 5 and row.total == 5  # handed in again twice: the latest, not the best
    (row,) = gradebook([canvas("ada_LATE_1001_5003_x.ipynb", 2), canvas("ada_1001_5001_x-1.ipynb", 9)]).rows
    assert row.cell("data_trap").score == 2 and row.cell("data_trap").counted.late

    def folder(name, score, status=Status.FAILED):
        return Graded(name, "ada", Result("data_trap", name, status, score, 10, ""))

    (row,) = gradebook([folder("ada__a.ipynb", 3), folder("ada__b.ipynb", 10, Status.PASSED)]).rows
    cell = row.cell("data_trap")
    assert cell.status == Status.MALFORMED and cell.score == 0 and row.total == 0
    assert "ada__a.ipynb, ada__b.ipynb" in cell.counted.result.output and "2 files" in cell.counted.result.output
    (row,) = gradebook([folder("ada__a.ipynb", 3), folder("ada__b.ipynb", 0, Status.GRADER_ERROR)]).rows
    assert row.cell("data_trap").status == "grader_error" and row.cell("data_trap").score is None
    assert row.total is None  # the regrade might have scored more
    (row,) = gradebook([folder("ada__a.ipynb", 3)]).rows
    assert row.cell("data_trap").score == 3


def test_submission_page_escapes_everything_and_keeps_hidden_checks_hidden(report):
    page = (report / "submissions" / "dan__06_data_trap.py.html").read_text()
    assert "<script" not in page and "<img" not in page  # no markup from the submission survives
    assert "&lt;script&gt;window.__pwned" in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page  # the student's own code, escaped too
    for secret in SECRETS:
        assert secret not in page
    assert "Gradient: `grad weight` differs" in page  # a hidden check still says that it failed, and why
    assert 'id="L4" class="culprit"' in page and 'href="#L4"' in page
    assert page.count('class="culprit"') == 1


def test_culprit_line_without_the_file(graded_dir):
    (graded,) = [g for g in load(graded_dir) if g.student == "dan"]
    changed = replace(graded.result, source=replace(graded.result.source, sha256="0" * 64))  # the file changed
    page = submission_page(Graded(graded.folder, "dan", changed), code_lines=None)
    assert "Culprit line(s) of your answer: 4" in page and 'class="code"' not in page


def test_the_root_cause_is_shown_once_at_the_top(report):
    feedback = root_cause(result("residual_add", "failed", 2, same_error_checks()))
    assert feedback.cause == [SAME_ERROR.text] and feedback.cause_checks == 3 and feedback.cause_lines == [3]
    assert [t["contexts"] for t in feedback.tests] == [
        [], ["Backward failed — scenario 'public', float32 on cpu"], ["scenario 'train', float32 on cpu"],
        ["scenario 'gradcheck', float64 on cpu"]]
    assert all(t["output"] == "" for t in feedback.tests)  # nothing left that the top does not say
    for page in (report / "submissions" / "cleo__01_residual_add.ipynb.html", report / "students" / "cleo.html"):
        text = page.read_text()
        assert text.count("What it means: PyTorch saved a tensor") == 1, page
        assert text.count("is at version 1; expected version 0") == 1, page
        assert "What went wrong (the same in 3 checks)" in text
        assert text.index("What went wrong") < text.index("backward runs")  # at the top, before the checks
        assert "scenario &#39;train&#39;, float32 on cpu: see “What went wrong” above." in text


def test_a_crash_says_its_cause_once(tmp_path):
    message = "Your code crashed the process that ran it: the process exited with status 0 before reporting"
    tests = tuple(TestResult(name, 0, 2, Status.FAILED, message, "visible", "", cause=0)
                  for name in ("values", "same", "leaf"))
    results_json(tmp_path, "frank__05_leaf_sgd.ipynb",
                 result("leaf_sgd", "crashed", 0, tests, f"0/10 points. {message}", causes=(Cause(message),)))
    paths = write_report(tmp_path, tmp_path / "r")
    text = (paths["students"] / "frank.html").read_text()
    assert text.count(message) == 1 and "<p>0/10 points.</p>" in text


def test_tampering_is_a_fact_not_a_phrase():
    def graded(status, output="", cause=None, check=None):
        return Result("residual_add", "x.py", status, 0, 10, output,
                      (TestResult("forward", 0, 2, *check, "visible", cause=0 if cause else None),) if check else (),
                      causes=(cause,) if cause else ())

    flagged = graded(Status.FAILED, cause=Cause("...", "TamperError", tampered=True), check=(Status.FAILED, "..."))
    forged = graded(Status.CRASHED, "...", cause=Cause("...", tampered=True))
    honest = graded(Status.CRASHED, "the report did not come from the grader's harness",
                    Cause("the report did not come from the grader's harness"))
    mentions = graded(Status.FAILED, cause=Cause("raised TamperError: your code replaced parts of the grader",
                                                 "RuntimeError"), check=(Status.FAILED, "TamperError"))
    assert [tampering(d) for d in (flagged, forged, honest, mentions)] == [True, True, False, False]


def test_overview_page(report):
    page = (report / "index.html").read_text()
    assert page.count("<svg") == 2  # score distribution, most common failing checks
    for secret in SECRETS:
        assert secret not in page and secret not in (report / "gradebook_lms.csv").read_text()
    assert "<script" not in page and not re.search(r"""(src|href)=["']?https?:""", page)  # offline
    assert "eve__01_residual_add.ipynb" in page and "internal grading error" in page
    attention = page[page.index('id="attention"'):page.index('id="missing"')]
    for label, who in (("Flagged as tampering", ("mallory", "trudy")), ("Crashed", ("trudy",)),
                       ("Unreadable (malformed)", ("zed",)), ("Not attempted", ("bob",))):
        row = attention[attention.index(label):].split("</tr>")[0]
        assert all(f">{name}</a>" in row for name in who), (label, row)
    assert ">ada</a>" not in attention and ">dan</a>" not in attention
    missing = page[page.index('id="missing"'):page.index("Per exercise")]
    assert ">bob</a> (#3)" in missing and ">dan</a> (#3)" in missing  # exercises they did not hand in
    for code, name in (("P", "passed"), ("F", "failed"), ("NA", "not attempted"), ("CR", "crashed"),
                       ("MF", "malformed"), ("GE", "grader error")):
        assert f'<span class="status {name.replace(" ", "_")}">{code}</span>' in page  # the legend, in words too
    assert "students/" in page and "by_score.html" in page
    assert not re.search(r'href="submissions/[^"]+"', page.replace("submissions/eve__01_residual_add.ipynb.html", ""))


def test_sorted_views_and_student_pages(report):
    def order(page):
        return re.findall(r'<tr><td><a href="students/[^"]+">([^<]+)</a>', (report / page).read_text())

    by_name = order("by_name.html")
    assert by_name == sorted(by_name, key=str.casefold) and len(by_name) == 9
    by_score = order("by_score.html")
    assert by_score[:2] == ["ada", "&lt;img src=x onerror=&#34;window.__pwned = 3&#34;&gt;"] and by_score[-1] == "eve"
    by_status = (report / "by_status.html").read_text()
    assert by_status.index("Worst status: grader error") < by_status.index("Worst status: crashed") \
        < by_status.index("Worst status: passed")
    assert order("by_status.html")[0] == "eve"
    for name in ("ada", "bob", "cleo", "dan", "eve", "mallory", "trudy", "zed"):
        page = (report / "students" / f"{name}.html").read_text()
        assert page.count("<section") == 2  # every exercise, handed in or not
        assert 'id="ex-residual_add"' in page and 'id="ex-data_trap"' in page
    assert "no submission of this exercise" in (report / "students" / "bob.html").read_text()
    eve = (report / "students" / "eve.html").read_text()
    assert "SECRET-TRACEBACK" in eve and "teachers only" in eve  # the teacher's page keeps the traceback
    mallory = (report / "students" / "mallory.html").read_text()
    assert "Flagged: tampering" in mallory and "Needs attention: Flagged as tampering: #3" in mallory


def test_the_students_own_folders_say_nothing_else(report, graded_dir):
    handout = graded_dir / "handout"
    folders = sorted(p.name for p in handout.iterdir())
    assert "ada" in folders and len(folders) == 9
    assert all(sorted(p.name for p in (handout / f).iterdir()) == ["index.html"] for f in folders)
    others = ("ada", "bob", "cleo", "dan", "mallory", "trudy", "zed")
    for folder in folders:
        page = (handout / folder / "index.html").read_text()
        assert "<nav" not in page and "index.html" not in page and "../" not in page  # no way out of the folder
        assert "students/" not in page and "submissions/" not in page and "by_score" not in page
        for teacher_only in (*SECRETS, "SECRET-STDOUT", "teachers only", "Flagged", "Needs attention", "/class/",
                             "__06_data_trap", "Mean score", "<svg"):
            assert teacher_only not in page, (folder, teacher_only)
        for name in others:
            if name != folder:
                assert f">{name}<" not in page and f"{name}__" not in page, (folder, name)
    eve = (handout / "eve" / "index.html").read_text()
    assert "not your fault, and your teacher has been told" in eve
    dan = (handout / "dan" / "index.html").read_text()
    assert 'id="data_trap-L4" class="culprit"' in dan and "&lt;script&gt;window.__pwned" in dan


def test_hostile_names_are_escaped_everywhere(report, graded_dir):
    pages = [report / "index.html", *report.glob("by_*.html"), *report.rglob("students/*.html"),
             *(graded_dir / "handout").rglob("*.html")]
    assert len(pages) == 4 + 2 * 9
    for page in pages:
        text = page.read_text()
        assert "<img" not in text and "<script" not in text, page
    assert "&lt;img src=x onerror=" in (report / "by_name.html").read_text()
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", p.name) for p in report.rglob("*"))  # safe file names


def test_every_file_is_readable_by_the_group(report, graded_dir):
    files = [p for p in [*report.rglob("*"), *(graded_dir / "handout").rglob("*")] if p.is_file()]
    assert len(files) > 30
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {oct(0o644)}  # not mkstemp's 0600


def test_report_command(graded_dir, tmp_path, capsys):
    assert autograder_cli.main(["report", str(graded_dir), "--out", str(tmp_path / "r"),
                            "--for-students", str(tmp_path / "hand")]) == 0
    captured = capsys.readouterr()
    assert (tmp_path / "r" / "index.html").is_file() and "gradebook for a spreadsheet" in captured.out
    assert (tmp_path / "hand" / "ada" / "index.html").is_file()
    assert "1 grader error(s)" in captured.err and "eve/residual_add" in captured.err  # the teacher is told
    assert autograder_cli.main(["report", str(tmp_path / "nothing")]) == 2
    (tmp_path / "empty").mkdir()
    assert autograder_cli.main(["report", str(tmp_path / "empty")]) == 2
    assert "grade first" in capsys.readouterr().err


# ---- a class of 300 ----------------------------------------------------------------------------------------

OLD_OVERVIEW_HEIGHT = 11_320
"""Pixels of the overview page the report wrote before it had sorted views (one table row per student), for
this very class of 300 in Chromium at 1280 px wide."""


def big_class(folder: Path, students: int = 300, seed: int = 0) -> None:
    """results.json files written directly: 300 students x 7 exercises, mostly passing or failing, some
    untouched, crashed, unreadable or out of time, as a large class's are."""
    rng = random.Random(seed)
    for i in range(students):
        for ex in EXERCISES.values():
            status = rng.choices(["passed", "failed", "not_attempted", "crashed", "malformed", "timed_out"],
                                 [50, 35, 6, 3, 3, 3])[0]
            tests = []
            for c in ex.checks:
                ok = status == "passed" or (status == "failed" and rng.random() < 0.6)
                tests.append({"name": c.name, "score": c.points if ok else 0, "max_score": c.points,
                              "status": "passed" if ok else "failed", "output": "" if ok else "Gradient differs.",
                              "visibility": "visible", "description": ""})
            score = sum(t["score"] for t in tests) if status in ("passed", "failed") else 0
            name = f"s{i:03d}__{ex.number:02d}_{ex.id}.ipynb"
            (folder / name).mkdir(parents=True)
            (folder / name / "results.json").write_text(json.dumps({
                "exercise": ex.id, "submission": name, "status": status, "score": score, "max_score": 10,
                "output": f"{score}/10 points.", "tests": tests, "devices": ["cpu"], "execution_time": 0.1}))


@pytest.fixture(scope="module")
def big_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("big")
    big_class(root / "grades")
    return write_report(root / "grades", root / "report")


def test_a_class_of_300(big_report):
    """Every page of a big class, and an overview of totals; how long it takes is no test's business (about 6 s
    on 2 busy cores; it failed at 72 s against a 60 s bound on a loaded machine)."""
    paths = big_report
    assert (len(list(paths["students"].iterdir())) == 300
            and len(list(paths["submissions"].iterdir())) == 300 * len(EXERCISES))
    index = paths["index"].read_text()
    assert (f"{300 * len(EXERCISES)} submissions from 300 students" in index
            and index.count("<tr>") < 30)  # no row per student
    by_score = (paths["index"].parent / "by_score.html").read_text()
    assert len(re.findall(r'<tr><td><a href="students/', by_score)) == 300


# ---- in a browser ------------------------------------------------------------------------------------------

needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium)")


def _height(page):
    page.set_viewport_size({"width": 1280, "height": 900})
    return page.evaluate("document.documentElement.scrollHeight")


@pytest.mark.slow
@needs_chromium
def test_reports_open_in_chromium_without_errors(report, graded_dir):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    root = report.parent
    some = ("dan__06_data_trap.py.html", "cleo__01_residual_add.ipynb.html", "eve__01_residual_add.ipynb.html")
    pages = [f"report/{p.relative_to(report)}" for p in sorted(report.rglob("*.html"))
             if p.parent.name != "submissions" or p.name in some]  # the others are made the same way
    pages += [f"handout/{p.relative_to(graded_dir / 'handout')}"
              for p in sorted((graded_dir / "handout").rglob("*.html"))]

    def inspect(page):
        return {"pwned": page.evaluate("typeof window.__pwned"), "svgs": page.locator("svg").count(),
                "body": page.inner_text("body"),
                "culprit": page.locator(".culprit").first.inner_text() if page.locator(".culprit").count() else ""}

    with serve(root) as base, open_browser() as browser:
        seen = {name: visit(browser, f"{base}{name}", inspect=inspect, wait_until="load") for name in pages}
    assert len(seen) == 4 + 9 + 3 + 9
    assert [p for r in seen.values() for p in r.problems()] == []
    for name, visited in seen.items():
        assert visited.extra["pwned"] == "undefined", name  # the submission's <script> never ran
        assert visited.extra["svgs"] == (2 if name == "report/index.html" else 0), name
        assert all(link.startswith(base) for link in visited.links), name  # nothing leaves the report
    dan = seen["report/submissions/dan__06_data_trap.py.html"].extra
    assert "<script>window.__pwned" in dan["body"]  # shown as text, not run
    assert dan["culprit"].endswith("weight /= weight.norm()")
    overview = seen["report/index.html"].extra["body"]
    assert "Needs attention" in overview and "failed: the code ran; some checks failed." in overview
    anchors = {link.split("#", 1)[1] for link in seen["report/by_name.html"].links if "#" in link}
    assert anchors == {"ex-residual_add", "ex-data_trap"} <= seen["report/students/ada.html"].ids


@pytest.mark.slow
@needs_chromium
def test_the_overview_of_300_is_a_page_a_teacher_can_read(big_report):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    paths = big_report
    with serve(paths["index"].parent) as base, open_browser() as browser:
        overview = visit(browser, base + "index.html", inspect=_height, wait_until="load")
        by_score = visit(browser, base + "by_score.html", inspect=_height, wait_until="load")
    assert overview.ok and by_score.ok, overview.problems() + by_score.problems()
    assert overview.extra < 4_500, overview.extra  # was 11,320 px: a row per student
    assert overview.extra * 2.5 < OLD_OVERVIEW_HEIGHT
    assert by_score.extra > 300 * 20  # the full table is there instead, a row per student


def test_no_leftover_files(report):
    assert not list(report.rglob(".*.tmp"))  # atomic writes leave nothing behind
