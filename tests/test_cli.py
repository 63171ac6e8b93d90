"""End to end: the command line on fixture submissions, in worker processes."""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.cli import main
from autograder.intake.submission import answer_code
from tests.conftest import ROOT, SOLUTIONS, solution_code

pytestmark = pytest.mark.slow


def solution(exercise_id: str):
    """The solution notebook of an exercise, whatever its number."""
    (path,) = SOLUTIONS.glob(f"*_{exercise_id}.ipynb")
    return path


def run_cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "autograder", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """A small class: a solution, a broken fix, and every kind of broken file, graded once."""
    d = tmp_path_factory.mktemp("class")
    shutil.copy(solution("residual_add"), d / "ada.ipynb")
    nb = nbformat.read(solution("residual_add"), as_version=4)
    for cell in nb.cells:
        cell.source = cell.source.replace("out = out + x  #", "out += x  #")
    nbformat.write(nb, d / "bob.ipynb")
    (d / "carol.ipynb").write_text('{"cells": [')  # invalid JSON
    for cell in nb.cells:
        cell.metadata.pop("tags", None)
    nbformat.write(nb, d / "dave.ipynb")  # lost its answer tags
    (d / "erin.py").write_text("def broken(:\n    pass\n")
    (d / "frank.py").write_text("import torch\n")  # defines nothing
    (d / "grace.py").write_text("import os\nos._exit(0)\n")
    out = d / "out"
    proc = run_cli("grade", str(d), "--exercise", "residual_add", "--out", str(out), "--jobs", "2", "--quiet")
    return d, out, proc


def results(out, name):
    return json.loads((out / name / "results.json").read_text())


def test_every_submission_gets_its_own_verdict(batch):
    d, out, proc = batch
    assert proc.returncode == 0, proc.stderr + proc.stdout
    expected = {"ada.ipynb": "passed", "bob.ipynb": "failed", "carol.ipynb": "malformed", "dave.ipynb": "malformed",
                "erin.py": "malformed", "frank.py": "failed", "grace.py": "crashed"}
    got = {name: results(out, name)["status"] for name in expected}
    assert got == expected
    assert results(out, "ada.ipynb")["score"] == 10
    assert "not valid notebook JSON" in results(out, "carol.ipynb")["output"]
    assert "no answer cells" in results(out, "dave.ipynb")["output"]
    assert "syntax error at line 1" in results(out, "erin.py")["output"]
    assert "`ResidualBlock` is not defined" in results(out, "frank.py")["output"]


def test_results_json_has_the_spec_fields(batch):
    _, out, _ = batch
    data = results(out, "bob.ipynb")
    for key in ("score", "max_score", "output", "tests", "exercise", "submission", "devices", "execution_time"):
        assert key in data
    for test in data["tests"]:
        assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
        assert test["status"] in ("passed", "failed")
    backward = next(t for t in data["tests"] if t["name"] == "backward runs")
    assert "modified by an inplace operation" in backward["output"]


def test_gradebook_has_one_row_per_submission(batch):
    d, out, proc = batch
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert sorted(r["submission"] for r in rows) == sorted(p.name for p in d.iterdir() if p.is_file())
    assert "ada.ipynb" in proc.stdout and "passed" in proc.stdout  # the summary table


def test_rerun_regrades_nothing_and_changed_files_are_regraded(batch):
    d, out, _ = batch
    before = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/results.json")}
    (out / "bob.ipynb" / "results.json").unlink()  # as if killed before bob was written
    shutil.copy(solution("residual_add"), d / "ada.ipynb")  # same content: not regraded
    proc = run_cli("grade", str(d), "--exercise", "residual_add", "--out", str(out), "--quiet")
    assert proc.returncode == 0
    after = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/results.json")}
    assert set(after) == set(before)
    changed = {n for n in after if after[n] != before.get(n)}
    assert changed == {"bob.ipynb"}
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert len(rows) == len(before)


def test_usage_errors_exit_2(tmp_path, capsys):
    assert main(["grade", str(tmp_path / "nothing")]) == 2
    assert main(["grade", str(tmp_path), "--exercise", "nope"]) == 2
    assert main(["grade", str(tmp_path)]) == 2  # an empty folder
    assert main(["grade", str(SOLUTIONS), "--jobs", "0"]) == 2
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        shutil.copy(solution("leaf_sgd"), tmp_path / d / "05_leaf_sgd.ipynb")
    out = tmp_path / "grades"
    assert main(["grade", str(tmp_path / "a"), str(tmp_path / "b"), "--quiet", "--out", str(out)]) == 0  # same names:
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["05_leaf_sgd-2.ipynb", "05_leaf_sgd.ipynb"]  # both


def test_grade_makes_in_advance_only_the_references_its_files_are_named_for(tmp_path, monkeypatch):
    """While the workers start, the grader makes the references of the exercises the files' names point to,
    not all twelve (on two cores that took the workers' start); a file named for none is graded all the
    same, its reference made when it is first needed."""
    from autograder.batch import Preparations

    made_early = []
    original = Preparations.make_in_background
    monkeypatch.setattr(Preparations, "make_in_background",
                        lambda self, ids: made_early.append(list(ids)) or original(self, ids))
    shutil.copy(solution("leaf_sgd"), tmp_path / "01_leaf_sgd.ipynb")
    shutil.copy(solution("data_trap"), tmp_path / "untitled.ipynb")  # its metadata says data_trap
    out = tmp_path / "grades"
    assert main(["grade", str(tmp_path), "--quiet", "--out", str(out), "--jobs", "1"]) == 0
    assert made_early == [["leaf_sgd"]]
    scores = {p.parent.name: json.loads(p.read_text())["score"] for p in out.glob("*/results.json")}
    assert scores == {"01_leaf_sgd.ipynb": 10, "untitled.ipynb": 10}


def test_check_command_on_the_solution_and_a_broken_file(tmp_path):
    ok = run_cli("check", str(solution("residual_add")))
    assert ok.returncode == 0 and "[PASS] forward" in ok.stdout and "hidden" not in ok.stdout.split("(Self-check")[0]
    bad = tmp_path / "bad.py"
    fixed = answer_code(solution("residual_add")).code
    bad.write_text(fixed.replace("out = out + x  #", "out += x  #"))  # the in-place add on relu's saved output
    assert bad.read_text() != fixed
    proc = run_cli("check", str(bad), "--exercise", "residual_add")
    assert proc.returncode == 1 and "[FAIL] backward runs" in proc.stdout


def test_check_and_grade_take_a_file_by_the_same_rules(tmp_path, capsys):
    """exercise_of decides for both: a file named for its exercise needs no --exercise; a notebook whose metadata
    names another exercise than the one asked for is refused by both, in the same words."""
    named = tmp_path / "residual_add-ada.py"
    named.write_text(solution_code("residual_add"))
    assert main(["check", str(named)]) == 0
    unnamed = tmp_path / "ada.py"
    unnamed.write_text(solution_code("residual_add"))
    assert main(["check", str(unnamed)]) == 2
    assert "does not say which exercise it is" in capsys.readouterr().err
    other = tmp_path / "other.ipynb"
    shutil.copy(solution("data_trap"), other)
    assert main(["check", str(other), "--exercise", "residual_add"]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "exercise residual_add was asked for" in said


def test_check_stops_a_loop_at_its_timeout_and_can_use_the_sandbox(tmp_path):
    loop = tmp_path / "loop.py"
    loop.write_text("def clamped_softmax_loss(logits, target, eps):\n    while True:\n        try:\n            pass\n"
                    "        except Exception:\n            pass\n")
    proc = run_cli("check", str(loop), "--exercise", "data_trap", "--timeout", "2")
    assert proc.returncode == 1 and "stopped after 2 s" in proc.stdout, proc.stdout + proc.stderr
    boxed = run_cli("check", str(solution("leaf_sgd")), "--sandbox")
    assert boxed.returncode == 0 and "[PASS]" in boxed.stdout, boxed.stdout + boxed.stderr


def test_list_and_assign_check():
    listed = run_cli("list")
    assert listed.returncode == 0 and "residual_add" in listed.stdout
    assert run_cli("assign", "--check").returncode == 0


def test_a_killed_batch_finishes_on_rerun_without_regrading(tmp_path):
    """SIGKILL the grader once some results are written; the same command then completes the batch."""
    import os
    import signal
    import time

    folder = tmp_path / "class"
    folder.mkdir()
    for i in range(10):
        shutil.copy(solution("leaf_sgd"), folder / f"s{i:02d}_leaf_sgd.ipynb")
    out = tmp_path / "out"
    args = [sys.executable, "-m", "autograder", "grade", str(folder), "--out", str(out), "--jobs", "1", "--quiet"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 300
    while len(list(out.glob("*/results.json"))) < 3 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/results.json")}
    assert 3 <= len(done) < 10 and not (out / "gradebook.csv").exists()
    for p in out.glob("*/results.json"):
        json.loads(p.read_text())  # every file written is whole
    rerun = run_cli("grade", str(folder), "--out", str(out), "--jobs", "1", "--quiet")
    assert rerun.returncode == 0
    after = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/results.json")}
    assert len(after) == 10 and all(after[n] == t for n, t in done.items())  # nothing regraded
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert sorted(r["submission"] for r in rows) == sorted(after) and {r["status"] for r in rows} == {"passed"}


def test_check_with_sandbox_says_so_when_it_cannot_sandbox(monkeypatch, capsys):
    monkeypatch.setattr("autograder.runner.pool.bwrap_problem", lambda: "bubblewrap is not installed")
    assert main(["check", str(solution("leaf_sgd")), "--sandbox"]) == 1
    assert "cannot sandbox: bubblewrap is not installed" in capsys.readouterr().err


HEAVY = ("torch", "nbformat", "autograder.batch", "autograder.blame", "autograder.platforms.export",
         "autograder.reports", "autograder.workshop.cli")
"""What no command that launches workers may have imported by then."""


def test_grade_and_check_launch_their_workers_before_importing_torch():
    """The imports of torch (the grader's, each worker's) then share the cores instead of queueing. `check`
    reads its notebook first (nbformat, not torch): the worker is warmed for that notebook's exercise only."""
    code = f"""
import sys
from autograder.runner import pool

seen = []

def launch(self, slots, *args, **kwargs):
    seen.append((slots, [name for name in {HEAVY!r} if name in sys.modules]))
    raise pool.PoolError("stopped by the test")

pool.WarmPool.__init__ = launch
from autograder.cli import main

assert main(["grade", "samples/class", "--jobs", "2"]) == 1
assert main(["check", {str(solution("data_trap"))!r}, "--sandbox"]) == 1
assert seen == [(2, []), (1, ["nbformat"])], seen
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("stopped by the test") == 2


def test_help_lists_every_command_and_all_their_arguments(capsys):
    """Each command adds its arguments only when it runs: its --help must still show all of them."""
    from autograder.cli import COMMANDS, parser

    def shown(argv: list[str], command_line=None) -> str:
        with pytest.raises(SystemExit) as ended:
            (command_line or main)(argv)
        assert ended.value.code == 0
        return capsys.readouterr().out

    top = shown(["--help"])
    for name, (summary, _) in COMMANDS.items():
        assert name in top and summary.split()[0] in top
    every = parser()  # all commands configured at once: what each one alone must show
    expected = {"list": [], "grade": ["--jobs", "--no-sandbox", "--run-as", "--memory", "paths"],
                "check": ["--sandbox", "--timeout", "path"], "assign": ["--solutions", "--out", "--exercise"],
                "publish": ["--check"], "release": ["--repository", "out"],
                "blame": ["--fix", "--json", "script"], "export": ["gradescope", "prairielearn"],
                "export gradescope": ["--hidden-visibility", "--memory-mb"], "export prairielearn": ["--image"],
                "report": ["--roster", "--for-students", "graded"], "workshop": ["serve"],
                "workshop serve": ["--hub", "--public-url", "--stuck-attempts"]}
    for command, options in expected.items():
        argv = [*command.split(), "--help"]
        alone = shown(argv)
        assert alone == shown(argv, every.parse_args)
        assert all(option in alone for option in options), (command, alone)
    assert {c.split()[0] for c in expected} == set(COMMANDS)


def test_every_option_of_every_command_says_what_it_does():
    """A teacher reading `autograder COMMAND --help` finds a line for every option and argument."""
    import argparse

    from autograder.cli import parser

    def walk(p: argparse.ArgumentParser, name: str):
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    yield from walk(child, f"{name} {sub}")
            elif not isinstance(action, argparse._HelpAction):
                yield name, action

    silent = [f"{name} {'/'.join(a.option_strings) or a.dest}" for name, a in walk(parser(), "autograder")
              if not a.help or a.help == argparse.SUPPRESS]
    assert silent == []


def test_grade_ends_with_counts_the_next_command_and_why_each_file_was_malformed(batch):
    _, out, proc = batch
    said = proc.stdout
    assert "7 submissions: 1 passed, 2 failed, 1 crashed, 3 malformed" in said
    assert f"Next: autograder report {out}" in said
    carol = next(line for line in said.splitlines() if "carol.ipynb" in line)
    assert "carol.ipynb is not valid" in carol  # a malformed row says why


def test_grade_says_when_the_class_was_graded_with_the_public_salt(batch, tmp_path):
    """`export` refuses the public default salt; `grade` grades with it, and says so (anyone with the repository
    can draw the same hidden inputs). With a salt of the term's, nothing is said."""
    _, _, proc = batch
    assert os.environ.get("AUTOGRADER_SALT") is None, "the batch fixture must run without a salt of its own"
    assert "public default salt" in proc.stdout and "AUTOGRADER_SALT" in proc.stdout
    (tmp_path / "class").mkdir()
    shutil.copy(solution("residual_add"), tmp_path / "class" / "ada.ipynb")
    salted = subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path / "class"), "--out",
                             str(tmp_path / "out"), "--device", "cpu"], cwd=ROOT, capture_output=True, text=True,
                            timeout=600, env={**os.environ, "AUTOGRADER_SALT": "a-secret-of-this-term"})
    assert salted.returncode == 0, salted.stderr
    assert "1 submissions: 1 passed" in salted.stdout and "public default salt" not in salted.stdout


def summary_of(results, table=False, width=200) -> str:
    from rich.console import Console

    from autograder.cli import _summary

    console = Console(record=True, width=width, force_terminal=False)
    _summary(console, results, Path("grades"), table)
    return console.export_text()


def test_a_big_class_gets_totals_not_a_screen_of_rows():
    from autograder.core.result import Result
    from autograder.core.status import Status

    results = [Result("residual_add", f"s{i}.ipynb", Status.PASSED if i % 3 else Status.MALFORMED, 10 if i % 3 else 0,
                      10, "10/10 points." if i % 3 else "0/10 points. s.ipynb is empty.") for i in range(600)]
    said = summary_of(results)
    assert len(said.splitlines()) <= 4 and "600 submissions: 400 passed, 200 malformed" in said
    assert "--table lists every submission" in said and "Next: autograder report grades" in said
    assert len(summary_of(results, table=True).splitlines()) > 600


def test_what_a_submission_named_reaches_the_terminal_as_text():
    """A file name or a message is shown, never obeyed: no escape sequence, no rich markup, no carriage return."""
    from autograder.core.result import Cause, Result
    from autograder.core.status import Status

    hostile = "[bold red]x[/]\x1b]0;owned\x07\r[PASS] 10/10\u202e.ipynb"
    said = summary_of([Result("residual_add", hostile, Status.MALFORMED, 0, 10, "\x1b[2J gone",
                              causes=(Cause("\x1b[2J gone"),))], width=300)
    assert "\x1b" not in said and "\r" not in said and "\u202e" not in said
    assert "[bold red]x[/]" in said and "\\x1b]0;owned\\x07" in said and "\\x1b[2J" in said
