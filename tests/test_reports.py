"""HTML feedback and the LMS gradebook: pure functions of results.json files, tested on results built here
(no grading processes), then opened in headless Chromium."""

import csv
import hashlib
import io
import json
import re
from pathlib import Path

import pytest

from autograder.export import cli as export_cli
from autograder.export.graded import Graded, load, student_of
from autograder.export.html import culprit_lines, submission_page, write_report
from autograder.export.lms import gradebook, gradebook_csv
from autograder.result import Result
from autograder.result import TestResult as Check  # not collected as a test class
from tests.browser import CHROMIUM, open_browser, serve, visit

ATTACK = '<script>window.__pwned = 1; console.error("pwned")</script><img src=x onerror="window.__pwned = 2">'
SECRETS = ("SECRET-HIDDEN-DESCRIPTION", "SECRET-STDOUT", "SECRET-TRACEBACK")
STUDENT_CODE = "import torch\n\ndef normalized_linear(x, weight):  # <b>bold</b>\n    weight /= weight.norm()\n" \
               "    return x @ weight.T\n"


def results_json(folder: Path, name: str, result: Result, path: Path | None = None, **extra) -> dict:
    data = result.to_json()
    data.update(submission=name, **extra)
    if path is not None:
        data["submission_path"] = str(path)
        data["submission_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (folder / name).mkdir(parents=True)
    (folder / name / "results.json").write_text(json.dumps(data))
    return data


def checks(passed: bool, attack: bool = False) -> tuple[Check, ...]:
    message = "" if passed else "Backward failed: Your code raised RuntimeError at line 4 of your answer " \
        "(`weight /= weight.norm()`).\nThe in-place change: `div_` at line 4 (`weight /= weight.norm()`)."
    return (
        Check("forward", 3, 3, "passed", "", "visible", "The output equals the intended math."),
        Check("backward runs", 3 if passed else 0, 3, "passed" if passed else "failed",
              message + (ATTACK if attack else ""), "visible", "backward runs"),
        Check("gradients", 4 if passed else 0, 4, "passed" if passed else "failed",
              "" if passed else "Gradient: `grad weight` differs (in scenario 'batch', float32 on cpu).",
              "after_due_date", "SECRET-HIDDEN-DESCRIPTION"),
    )


@pytest.fixture(scope="module")
def graded_dir(tmp_path_factory):
    """A graded folder as `autograder grade --out` writes it, for five students."""
    root = tmp_path_factory.mktemp("graded")
    out = root / "grades"
    dan_file = root / "class" / "dan" / "06_data_trap.py"
    dan_file.parent.mkdir(parents=True)
    dan_file.write_text(STUDENT_CODE)

    def result(exercise, status, score, tests=(), output=None):
        return Result(exercise, "", status, score, 10, output or f"{score:g}/10 points.", tests)

    results_json(out, "ada__06_data_trap.ipynb", result("data_trap", "passed", 10, checks(True)))
    results_json(out, "ada__01_residual_add.ipynb", result("residual_add", "passed", 10, checks(True)))
    results_json(out, "dan__06_data_trap.py", result("data_trap", "failed", 3, checks(False, attack=True)),
                 path=dan_file, stdout="SECRET-STDOUT " + ATTACK)
    results_json(out, "bob__06_data_trap.ipynb", result("data_trap", "not_attempted", 0, output="Not attempted."))
    results_json(out, "eve__01_residual_add.ipynb", result("residual_add", "grader_error", 0),
                 grader_traceback="SECRET-TRACEBACK")
    results_json(out, "data_trap_zed.py", result("data_trap", "malformed", 0, output="zed.py is empty."))
    return out


@pytest.fixture(scope="module")
def report(graded_dir):
    paths = write_report(graded_dir, graded_dir / "report")
    return paths["index"].parent


@pytest.mark.parametrize("data, student", [
    ({"submission": "ada__01_residual_add.ipynb", "exercise": "residual_add"}, "ada"),
    ({"submission": "ada__week1__x.py", "exercise": "residual_add"}, "ada"),
    ({"submission": "data_trap_zed.py", "exercise": "data_trap"}, "zed"),
    ({"submission": "06_data_trap-zed.py", "exercise": "data_trap"}, "zed"),
    ({"submission": "01_residual_add.ipynb", "exercise": "residual_add",
      "submission_path": "class/cleo/01_residual_add.ipynb"}, "cleo"),
    ({"submission": "01_residual_add.ipynb", "exercise": "residual_add"}, "(unknown)"),
])
def test_whose_submission(data, student):
    assert student_of(data) == student


def test_lms_gradebook_one_row_per_student(graded_dir):
    graded = load(graded_dir)
    rows = list(csv.reader(io.StringIO(gradebook_csv(gradebook(graded)))))
    assert rows[0] == ["student", "residual_add", "data_trap", "total"]  # course order, not file order
    table = {r[0]: r[1:] for r in rows[1:]}
    assert table == {
        "ada": ["10", "10", "20"],
        "bob": ["", "0", "0"],
        "dan": ["", "3", "3"],
        "eve": ["", "", "0"],  # grader_error: left empty for the teacher, never a 0
        "zed": ["", "0", "0"],
    }


def test_lms_gradebook_keeps_the_best_of_two_submissions():
    def g(score, status="failed"):
        return Graded(f"s{score}", "ada", "data_trap", {"score": score, "status": status})

    book = gradebook([g(3), g(7), g(0, "grader_error")])
    assert book.rows == (("ada", {"data_trap": 7.0}, 7.0),)


def test_culprit_lines_are_found_in_feedback():
    from autograder.feedback import culprit_text  # the grader's own wording, so the two cannot drift

    located = culprit_text({"culprit": {"op": "torch.Tensor.add_", "line": 3, "code": "y += 1"},
                            "saved_by": {"op": "torch.relu", "line": 2, "code": "y = x.relu()"}})
    text = "raised RuntimeError at line 7 of your answer (`x`).\n" + located
    assert culprit_lines(text) == [7, 3]
    assert culprit_lines("Your answer has a syntax error at line 2: invalid syntax") == [2]
    assert culprit_lines("Gradient differs") == []


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


def test_culprit_line_without_the_file(graded_dir, tmp_path):
    (graded,) = [g for g in load(graded_dir) if g.student == "dan"]
    changed = dict(graded.data, submission_sha256="0" * 64)  # the file changed since grading
    page = submission_page(Graded(graded.folder, "dan", "data_trap", changed), code_lines=None)
    assert "Culprit line(s) of your answer: 4" in page and 'class="code"' not in page


def test_overview_page(report, graded_dir):
    page = (report / "index.html").read_text()
    assert page.count("<svg") == 2  # score distribution, most common failing checks
    for secret in SECRETS:
        assert secret not in page and secret not in (report / "gradebook_lms.csv").read_text()
    assert "<script" not in page and not re.search(r"""(src|href)=["']?https?:""", page)  # offline
    assert "eve__01_residual_add.ipynb" in page and "internal grading error" in page
    links = re.findall(r'href="(submissions/[^"]+)"', page)
    assert len(links) == 6 and all((report / link).is_file() for link in links)


def test_report_command(graded_dir, tmp_path, capsys):
    assert export_cli.main(["report", str(graded_dir), "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "index.html").is_file() and "LMS gradebook" in capsys.readouterr().out
    assert export_cli.main(["report", str(tmp_path / "nothing")]) == 2
    (tmp_path / "empty").mkdir()
    assert export_cli.main(["report", str(tmp_path / "empty")]) == 2
    assert "grade first" in capsys.readouterr().err


# ---- in a browser ------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium)")
def test_reports_open_in_chromium_without_errors(report):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    pages = ["index.html", *(f"submissions/{p.name}" for p in sorted((report / "submissions").iterdir()))]

    def inspect(page):
        return {"pwned": page.evaluate("typeof window.__pwned"), "svgs": page.locator("svg").count(),
                "body": page.inner_text("body"),
                "culprit": page.locator(".culprit").inner_text() if page.locator(".culprit").count() else ""}

    with serve(report) as base, open_browser() as browser:
        seen = {name: visit(browser, f"{base.rstrip('/')}/{name}", inspect=inspect) for name in pages}
    assert [p for r in seen.values() for p in r.problems()] == []
    for name, visited in seen.items():
        assert visited.extra["pwned"] == "undefined", name  # the submission's <script> never ran
        assert visited.extra["svgs"] == (2 if name == "index.html" else 0), name
    dan = seen["submissions/dan__06_data_trap.py.html"].extra
    assert "<script>window.__pwned" in dan["body"]  # shown as text, not run
    assert dan["culprit"].endswith("weight /= weight.norm()")


def test_no_leftover_files(report):
    assert not list(report.rglob(".*.tmp"))  # atomic writes leave nothing behind
