"""End to end: the command line on fixture submissions, in worker processes."""

import csv
import json
import shutil
import subprocess
import sys

import nbformat
import pytest

from autograder.cli import main
from tests.conftest import ROOT, SOLUTIONS

pytestmark = pytest.mark.slow


def run_cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "autograder", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """A small class: a solution, a broken fix, and every kind of broken file, graded once."""
    d = tmp_path_factory.mktemp("class")
    shutil.copy(SOLUTIONS / "01_residual_add.ipynb", d / "ada.ipynb")
    nb = nbformat.read(SOLUTIONS / "01_residual_add.ipynb", as_version=4)
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
    shutil.copy(SOLUTIONS / "01_residual_add.ipynb", d / "ada.ipynb")  # same content: not regraded
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
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        shutil.copy(SOLUTIONS / "05_leaf_sgd.ipynb", tmp_path / d / "05_leaf_sgd.ipynb")
    out = tmp_path / "grades"
    assert main(["grade", str(tmp_path / "a"), str(tmp_path / "b"), "--quiet", "--out", str(out)]) == 0  # same names:
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["05_leaf_sgd-2.ipynb", "05_leaf_sgd.ipynb"]  # both


def test_check_command_on_the_solution_and_a_broken_file(tmp_path):
    ok = run_cli("check", str(SOLUTIONS / "01_residual_add.ipynb"))
    assert ok.returncode == 0 and "[PASS] forward" in ok.stdout and "hidden" not in ok.stdout.split("(Self-check")[0]
    bad = tmp_path / "bad.py"
    bad.write_text((ROOT / "tests/exercises/test_residual_add.py").read_text().split('HEADER = """')[1].split('"""')[0]
                   + "        out = self.bn1(self.conv1(x)).relu()\n        out += x\n        return out\n")
    proc = run_cli("check", str(bad), "--exercise", "residual_add")
    assert proc.returncode == 1 and "[FAIL] backward runs" in proc.stdout


def test_check_stops_a_loop_at_its_timeout_and_can_use_the_sandbox(tmp_path):
    loop = tmp_path / "loop.py"
    loop.write_text("def normalized_linear(x, weight):\n    while True:\n        try:\n            pass\n"
                    "        except Exception:\n            pass\n")
    proc = run_cli("check", str(loop), "--exercise", "data_trap", "--timeout", "2")
    assert proc.returncode == 1 and "Stopped after 2 s" in proc.stdout, proc.stdout + proc.stderr
    boxed = run_cli("check", str(SOLUTIONS / "05_leaf_sgd.ipynb"), "--sandbox")
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
        shutil.copy(SOLUTIONS / "05_leaf_sgd.ipynb", folder / f"s{i:02d}_leaf_sgd.ipynb")
    out = tmp_path / "out"
    args = [sys.executable, "-m", "autograder", "grade", str(folder), "--out", str(out), "--jobs", "1", "--quiet"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
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
    assert main(["check", str(SOLUTIONS / "05_leaf_sgd.ipynb"), "--sandbox"]) == 1
    assert "cannot sandbox: bubblewrap is not installed" in capsys.readouterr().err


def test_grade_launches_its_workers_before_importing_torch():
    """The three imports of torch (grader, two workers) then share the cores: README, "Measured"."""
    code = """
import sys
from autograder.cli import start_workers_early
pool = start_workers_early(["grade", "samples/class", "--jobs", "2", "--no-sandbox"])
assert "torch" not in sys.modules, "torch was imported before the workers were launched"
assert len(pool._slots) == 2 and all(s.proc is not None for s in pool._slots)
pool.ready()
pool.close()
for argv in (["list"], ["grade", "no/such/folder"], ["grade", "samples/class", "--jobs", "zero"], ["grade", "--help"]):
    assert start_workers_early(argv) is None, argv
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
