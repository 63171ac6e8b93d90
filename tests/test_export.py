"""Platform bundles: unpack each, run its grader as the platform would (outside a container, with
AUTOGRADER_ROOT pointing at a temporary root) on a correct and on a wrong submission."""

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder import cli as autograder_cli
from autograder.bundle import container, grader
from autograder.bundle.config import DEFAULT_MEMORY_MB, BundleConfig
from autograder.bundle.source import ExportError
from autograder.bundle.student_folder import grade_folder, not_submitted
from autograder.core.result import Printed, Result, TestResult
from autograder.core.status import Status
from autograder.platforms import gradescope, platforms, prairielearn
from autograder.reference_store import known_submissions
from autograder.runner import InProcessRunner
from autograder.runner.pool import PoolError
from tests.conftest import ROOT, SOLUTIONS

CLASS = ROOT / "samples" / "class"
CORRECT = CLASS / "ada" / "02_data_trap.ipynb"
PARTLY_RIGHT = "logits shifted in place through .data"
"""data_trap's catalogue entry that scores part of the points (8/10): the platforms must carry a partial score."""


def partly_right(tmp: Path) -> Path:
    """Ada's notebook with the catalogue's partly right answer in its (one) answer cell."""
    nb = nbformat.read(CORRECT, as_version=4)
    (cell,) = [c for c in nb.cells if "answer" in c.metadata.get("tags", [])]
    cell.source = known_submissions("data_trap").wrong[PARTLY_RIGHT][0]
    tmp.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, tmp / CORRECT.name)
    return tmp / CORRECT.name
GRADESCOPE_VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
VENV_BIN = str(Path(sys.executable).parent)  # the platform's python3 is this one, with the package installed


def run_in_parallel(commands: list[tuple[list[str], dict]]) -> list[subprocess.CompletedProcess]:
    """Starts every grader at once (each is one submission, as on the platform) and waits for all."""
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for cmd, env in commands]
    done = []
    try:
        for proc, (cmd, _) in zip(procs, commands):
            out, _ = proc.communicate(timeout=300)
            done.append(subprocess.CompletedProcess(cmd, proc.returncode, out))
    finally:
        for proc in procs:  # a grader that hung is not left behind
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return done


def run_gradescope(root: Path) -> int:
    return grader.run(gradescope.PLATFORM, root, argparse.Namespace())


def run_prairielearn(root: Path, config: Path, exercise: str) -> int:
    return grader.run(prairielearn.PLATFORM, root, argparse.Namespace(config=config, exercise=exercise))


def platform_env(root: Path) -> dict:
    return {**os.environ, "AUTOGRADER_ROOT": str(root), "PATH": VENV_BIN + os.pathsep + os.environ["PATH"]}


# ---- Gradescope --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gradescope_zip(tmp_path_factory):
    out = tmp_path_factory.mktemp("gradescope")
    return gradescope.export(out, BundleConfig(exercises=("data_trap",)))


def gradescope_root(tmp: Path, bundle: Path, submission: Path | None) -> Path:
    """/autograder as Gradescope lays it out: source/ (the unzipped bundle), submission/, results/."""
    root = tmp / "autograder"
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):  # zipfile drops modes on extract; Gradescope keeps them
        (root / "source" / name).chmod(0o755)
    (root / "submission").mkdir()
    if submission is not None:
        shutil.copy(submission, root / "submission" / submission.name)
    return root


def test_gradescope_bundle_layout(gradescope_zip):
    with zipfile.ZipFile(gradescope_zip) as zf:
        names = set(zf.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        setup = zf.read("setup.sh").decode()
        config = json.loads(zf.read("autograder_config.json"))
    assert {"setup.sh", "run_autograder", "course/pyproject.toml", "course/README.md",
            "course/autograder/__init__.py", "course/autograder/platforms/gradescope.py"} <= names
    assert modes["setup.sh"] & stat.S_IXUSR and modes["run_autograder"] & stat.S_IXUSR
    assert not any(n.startswith(("solutions/", "samples/")) or "__pycache__" in n for n in names)
    assert ('install "torch==2.13.0" --index-url "${AUTOGRADER_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"'
            in setup)
    # the sandbox, and the user student code runs as where the sandbox cannot run; the grader's files root's only
    assert "bubblewrap" in setup and "useradd --system --no-create-home" in setup and "autograder-student" in setup
    assert 'chmod -R go-rwx "$SOURCE"' in setup and 'chmod -R a+rX,go-w "$VENV"' in setup
    syntax = subprocess.run(["bash", "-n"], input=setup, capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr
    assert config["exercises"] == ["data_trap"] and config["options"] == {}
    assert gradescope.hidden_visibility(BundleConfig(("data_trap",))) == "after_due_date"
    assert names & {n for n in names if n.startswith("references/")} == {"references/README.md",
                                                                        "references/data_trap.py"}


def test_gradescope_export_is_reproducible(gradescope_zip, tmp_path):
    again = gradescope.export(tmp_path, BundleConfig(exercises=("data_trap",)))
    assert again.read_bytes() == gradescope_zip.read_bytes()


@pytest.mark.slow
def test_gradescope_grades_a_correct_and_a_wrong_submission(gradescope_zip, tmp_path):
    submissions = (("a", CORRECT), ("d", partly_right(tmp_path / "hand-in")))
    roots = [gradescope_root(tmp_path / name, gradescope_zip, sub) for name, sub in submissions]
    procs = run_in_parallel([(["bash", str(r / "source" / "run_autograder")], platform_env(r)) for r in roots])
    for proc in procs:
        assert proc.returncode == 0, proc.stdout
    correct, wrong = (json.loads((r / "results" / "results.json").read_text()) for r in roots)
    for data in (correct, wrong):
        assert {"score", "output", "tests", "stdout_visibility"} <= set(data)
        for t in data["tests"]:
            assert {"name", "score", "max_score", "status", "output", "visibility"} <= set(t)
            assert t["status"] in ("passed", "failed") and t["visibility"] in GRADESCOPE_VISIBILITY
    assert correct["score"] == 10 and all(t["status"] == "passed" for t in correct["tests"])
    assert 0 < wrong["score"] < 10
    hidden = [t for t in wrong["tests"] if t["name"].endswith("(hidden inputs)")]
    assert hidden and {t["visibility"] for t in hidden} == {"after_due_date"}
    assert {t["visibility"] for t in wrong["tests"] if t not in hidden} == {"visible"}
    # the always-visible summary counts public points only and says nothing of the hidden checks' messages
    assert "public checks" in wrong["output"]
    assert not any(t["output"] and t["output"] in wrong["output"] for t in hidden)
    assert "stdout" not in json.dumps(wrong["extra_data"])


def test_gradescope_malformed_and_wrong_notebook(gradescope_zip, tmp_path, monkeypatch):
    monkeypatch.setattr(container, "make_runner", FakeRunner(broken={"data_trap"}))  # no answer code runs here
    empty = tmp_path / "02_data_trap.ipynb"
    empty.write_text("")
    root = gradescope_root(tmp_path / "m", gradescope_zip, empty)
    assert run_gradescope(root) == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 0 and len(data["tests"]) == 1
    assert data["tests"][0]["max_score"] == 10 and "is empty" in data["tests"][0]["output"]

    root = gradescope_root(tmp_path / "w", gradescope_zip, CLASS / "ada" / "03_residual_add.ipynb")
    assert run_gradescope(root) == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 0 and "notebook of exercise 'residual_add'" in data["output"]

    root = gradescope_root(tmp_path / "n", gradescope_zip, None)
    assert run_gradescope(root) == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 0 and "Submit 02_data_trap.ipynb" in data["output"]


def test_two_copies_of_one_exercise_say_which_was_graded(tmp_path):
    for name in ("02_data_trap.ipynb", "02_data_trap (1).ipynb"):
        (tmp_path / name).write_text("")
    (result,) = grade_folder(tmp_path, BundleConfig(("data_trap",)), runner=None)  # unreadable: never run
    assert result.status == "malformed"
    assert "(Graded 02_data_trap (1).ipynb; not graded: 02_data_trap.ipynb.)" in result.output


class FakeRunner:
    """Trusted solutions run in process (fast); the exercises named in `broken` fail as the grader would."""

    def __init__(self, broken=()):
        self.broken = set(broken)

    def __call__(self, config):
        return self

    def run(self, job):
        if job.exercise in self.broken:
            raise RuntimeError("the worker could not start")
        return InProcessRunner().run(job)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def config_root(tmp: Path, config: BundleConfig, files: list[Path]) -> Path:
    """/autograder with only what run() reads: the configuration and the submission."""
    root = tmp / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "source" / "autograder_config.json").write_text(config.to_json())
    (root / "submission").mkdir()
    for f in files:
        shutil.copy(f, root / "submission" / f.name)
    return root


def test_gradescope_grader_fault_on_one_exercise_keeps_the_others(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(container, "make_runner", FakeRunner(broken={"data_trap"}))
    config = BundleConfig(("residual_add", "data_trap"))
    root = config_root(tmp_path, config, [SOLUTIONS / "03_residual_add.ipynb", SOLUTIONS / "02_data_trap.ipynb"])
    assert run_gradescope(root) == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 10  # residual_add graded as usual
    fault = [t for t in data["tests"] if t["tags"] == ["data_trap"]]
    assert len(fault) == 1 and fault[0]["score"] == 0 and fault[0]["max_score"] == 10
    assert "grader's fault, not yours" in fault[0]["output"] and "staff have been told" in fault[0]["output"]
    assert "RuntimeError" not in json.dumps(data)  # the detail is for staff: in the log, not in the results
    log = capsys.readouterr().out
    assert "GRADER ERROR on exercise data_trap" in log and "RuntimeError" in log and "Traceback" in log
    assert {e["exercise"]: e["status"] for e in data["extra_data"]["exercises"]} == {
        "residual_add": "passed", "data_trap": "grader_error"}


def test_gradescope_writes_results_when_the_worker_will_not_start(tmp_path, monkeypatch):
    def no_pool(config):
        raise PoolError("worker slot 0 did not start")

    monkeypatch.setattr(container, "make_runner", no_pool)
    root = config_root(tmp_path, BundleConfig(("residual_add", "data_trap")), [SOLUTIONS / "02_data_trap.ipynb"])
    assert run_gradescope(root) == 0
    data = json.loads((root / "results" / "results.json").read_text())
    by_tag = {t["tags"][0]: t for t in data["tests"]}
    assert "Submit 03_residual_add.ipynb" in by_tag["residual_add"]["output"]  # still told what is missing
    assert "grader's fault" in by_tag["data_trap"]["output"] and data["score"] == 0


def test_gradescope_broken_bundle_still_writes_results(tmp_path, capsys):
    root = config_root(tmp_path, BundleConfig(("data_trap",)), [CORRECT])
    (root / "source" / "autograder_config.json").write_text("{not json")
    assert run_gradescope(root) == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 0 and "grader's fault" in data["output"] and "autograder_config.json" in data["output"]
    assert "Traceback" in capsys.readouterr().err


def test_gradescope_execution_time_is_the_runs_wall_clock(tmp_path, monkeypatch):
    class SlowStart(FakeRunner):
        def __enter__(self):  # a worker's start-up: outside every exercise's own clock, inside the run's
            time.sleep(0.3)
            return self

    monkeypatch.setattr(container, "make_runner", SlowStart())
    root = config_root(tmp_path, BundleConfig(("data_trap",)), [SOLUTIONS / "02_data_trap.ipynb"])
    start = time.perf_counter()
    run_gradescope(root)
    wall = time.perf_counter() - start
    data = json.loads((root / "results" / "results.json").read_text())
    assert 0.3 <= data["execution_time"] <= wall + 0.01


def test_gradescope_unmatched_files_name_the_files_expected(tmp_path, monkeypatch):
    monkeypatch.setattr(container, "make_runner", FakeRunner())
    notes = tmp_path / "notes.py"
    notes.write_text("print('my scratch work')\n")
    config = BundleConfig(("residual_add", "data_trap"))
    root = config_root(tmp_path, config, [SOLUTIONS / "02_data_trap.ipynb", CLASS / "ada" / "01_leaf_sgd.ipynb", notes])
    assert run_gradescope(root) == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 10
    note = data["output"].splitlines()[-1]
    assert note.startswith("Not graded: ") and "notes.py (it is none of this assignment's exercises)" in note
    assert "01_leaf_sgd.ipynb (the notebook of exercise leaf_sgd, which this assignment does not grade)" in note
    assert "grades 03_residual_add.ipynb, 02_data_trap.ipynb" in note


def test_results_are_roots_to_write_and_the_grader_files_roots_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(container, "make_runner", FakeRunner())
    root = config_root(tmp_path, BundleConfig(("data_trap",)), [SOLUTIONS / "02_data_trap.ipynb"])
    run_gradescope(root)
    mode = {name: stat.S_IMODE((root / name).stat().st_mode) for name in ("source", "submission", "results")}
    assert mode == {"source": 0o700, "submission": 0o700, "results": 0o755}
    assert stat.S_IMODE((root / "results" / "results.json").stat().st_mode) == 0o644


def fake_result(exercise="data_trap", score=3.0, status=Status.FAILED):
    tests = (TestResult("forward", 3, 3, Status.PASSED, "", "visible", "forward matches"),
             TestResult("gradients", 0, 7, Status.FAILED, "Gradient differs (in scenario 'batch').", "after_due_date",
                        "secret description of the hidden check"))
    return Result(exercise, "02_data_trap.ipynb", status, score, 10, f"{score:g}/10 points.", tests,
                  printed=Printed(stdout="SECRET-STDOUT printed on hidden inputs"))


@pytest.mark.parametrize("visibility", ["hidden", "after_published", "visible"])
def test_gradescope_hidden_visibility_option(visibility):
    data = gradescope.to_gradescope([fake_result()],
                                    BundleConfig(("data_trap",), options={"hidden_visibility": visibility}))
    hidden = data["tests"][1]
    assert hidden["visibility"] == visibility
    assert "secret description" not in json.dumps(data) and "SECRET-STDOUT" not in json.dumps(data)
    assert ("public checks 3/3" in data["output"]) == (visibility != "visible")


def test_gradescope_several_exercises_in_one_bundle():
    config = BundleConfig(("residual_add", "data_trap"))
    data = gradescope.to_gradescope([not_submitted("residual_add", []), fake_result()], config)
    assert data["score"] == 3
    assert sum(t["max_score"] for t in data["tests"]) == 20
    assert [t["name"] for t in data["tests"]] == ["3. residual_add: submission", "2. data_trap: forward",
                                                 "2. data_trap: gradients (hidden inputs)"]


def test_prairielearn_results_keep_hidden_checks_hidden():
    data = prairielearn.to_prairielearn(fake_result())
    assert data["gradable"] is True and data["score"] == 0.3
    assert [t["name"] for t in data["tests"]] == ["forward", "gradients (hidden inputs)"]
    assert "secret description" not in json.dumps(data) and "SECRET-STDOUT" not in json.dumps(data)
    assert data["tests"][1]["message"] == "Gradient differs (in scenario 'batch')."


def test_export_refuses_the_public_salt_unless_asked(tmp_path, capsys, monkeypatch):
    """Without AUTOGRADER_SALT a bundle's hidden inputs would be the course's public ones, which anyone with the
    repository (and its references) can compute answers for: refused, or made with a loud warning on request."""
    monkeypatch.delenv("AUTOGRADER_SALT", raising=False)
    assert autograder_cli.main(["export", "gradescope", "--out", str(tmp_path / "gs")]) == 2
    assert "AUTOGRADER_SALT is not set" in capsys.readouterr().err and not (tmp_path / "gs").exists()
    assert autograder_cli.main(["export", "gradescope", "--out", str(tmp_path / "gs"), "--public-salt"]) == 0
    assert "public default salt" in capsys.readouterr().err
    monkeypatch.setenv("AUTOGRADER_SALT", "term-2026-secret")
    assert autograder_cli.main(["export", "gradescope", "--out", str(tmp_path / "gs2")]) == 0
    with zipfile.ZipFile(tmp_path / "gs2" / "autograder.zip") as zf:
        assert json.loads(zf.read("autograder_config.json"))["salt"] == "term-2026-secret"
    assert "public default salt" not in capsys.readouterr().err


def test_every_platform_is_an_export_subcommand():
    assert set(platforms()) == {"gradescope", "prairielearn"}
    subcommands = autograder_cli.parser("export")._subparsers._group_actions[0].choices["export"]
    assert set(subcommands._subparsers._group_actions[0].choices) == set(platforms())


def test_export_commands(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AUTOGRADER_SALT", "term-secret")
    assert autograder_cli.main(["export", "gradescope", "--out", str(tmp_path / "gs"), "--exercise", "leaf_sgd"]) == 0
    with zipfile.ZipFile(tmp_path / "gs" / "autograder.zip") as zf:
        config = json.loads(zf.read("autograder_config.json"))
        assert config["exercises"] == ["leaf_sgd"] and config["memory_mb"] == 128
    said = capsys.readouterr().out
    assert "Ubuntu 22.04 (Python 3.10)" in said and "autograder-student" in said
    assert "768 MB: enough" in said and "past 218" in said
    assert autograder_cli.main(["export", "gradescope", "--out", str(tmp_path / "gs"), "--memory-mb", "400"]) == 0
    said = capsys.readouterr().out
    assert "NOT enough: raise the assignment's memory limit (Settings > Autograder Settings) to at least 950 MB" in said
    assert autograder_cli.main(["export", "prairielearn", "--out", str(tmp_path / "pl"), "--image", "me/g:1"]) == 0
    said = capsys.readouterr().out
    assert "docker build --platform linux/amd64 -t me/g:1" in said and "2048 MB: enough" in said
    assert autograder_cli.main(["export", "gradescope", "--out", str(tmp_path / "gs"), "--memory-mb", "8"]) == 2
    assert "at least 32" in capsys.readouterr().err
    assert autograder_cli.main(["export", "prairielearn", "--out", str(tmp_path / "pl"), "--image", "a b"]) == 2
    assert "Docker image name" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # no default image: it would name a namespace the course does not own
        autograder_cli.main(["export", "prairielearn", "--out", str(tmp_path / "pl")])
    with pytest.raises(SystemExit):
        autograder_cli.main(["export", "gradescope", "--out", str(tmp_path), "--exercise", "nope"])


def test_bad_export_options_say_what_is_wrong():
    with pytest.raises(ExportError, match="unknown exercise"):
        BundleConfig(("no_such_exercise",))
    for options in ({"hidden_visibility": 3}, [("a", "b")]):
        with pytest.raises(ExportError, match="options are text"):
            BundleConfig(("data_trap",), options=options)
    with pytest.raises(SystemExit):
        autograder_cli.main(["export", "gradescope", "--out", "x", "--hidden-visibility", "sometimes"])
    for memory in (0, 31, 64.5, True, "128"):
        with pytest.raises(ExportError, match="memory"):
            BundleConfig(("data_trap",), memory_mb=memory)


def test_bundle_memory_reaches_the_worker(tmp_path, monkeypatch):
    config = BundleConfig(("data_trap",), memory_mb=200, timeout=30)
    (tmp_path / "c.json").write_text(config.to_json())
    assert BundleConfig.load(tmp_path / "c.json") == config
    (tmp_path / "old.json").write_text(json.dumps({"exercises": ["data_trap"]}))  # a bundle from before the setting
    assert BundleConfig.load(tmp_path / "old.json").memory_mb == DEFAULT_MEMORY_MB
    made = {}

    class Pool:
        warning = None

        def __init__(self, slots, limits, wait=True, run_as=None, exercises=None):
            made.update(slots=slots, limits=limits, run_as=run_as, exercises=exercises)

    monkeypatch.setattr(container, "WarmPool", Pool)
    container.make_runner(config)
    assert made["limits"].memory == 200 * 1024**2  # the timeout is each job's (config.settings)
    assert made["exercises"] == ("data_trap",)  # warmed for the bundle's exercises only
    # never root (the student user may come and go: tests/test_platforms_as_root.py makes it)
    assert made["run_as"] in ((container.STUDENT_USER, "nobody") if os.geteuid() == 0 else (None,))


# ---- PrairieLearn ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prairielearn_course(tmp_path_factory):
    out = tmp_path_factory.mktemp("prairielearn")
    prairielearn.export(out, BundleConfig(exercises=("residual_add", "data_trap")), image="me/inplace-grader:1")
    return out


def grade_root(tmp: Path, course: Path, submission: Path) -> Path:
    """/grade as PrairieLearn lays it out: serverFilesCourse/ (the listed folders), student/, data/."""
    root = tmp / "grade"
    shutil.copytree(course / "serverFilesCourse", root / "serverFilesCourse")
    (root / "student").mkdir(parents=True)
    shutil.copy(submission, root / "student" / "02_data_trap.ipynb")
    (root / "data").mkdir()
    (root / "data" / "data.json").write_text("{}")
    return root


def test_prairielearn_questions(prairielearn_course):
    infos = {}
    for folder in sorted((prairielearn_course / "questions" / "inplace_autograd").iterdir()):
        info = json.loads((folder / "info.json").read_text())
        infos[folder.name] = info
        options = info["externalGradingOptions"]
        assert info["gradingMethod"] == "External" and "enabled" not in options  # deprecated
        assert options["image"] == "me/inplace-grader:1" and 0 < options["timeout"] <= 600
        entry, exercise = options["entrypoint"].split()
        local = prairielearn_course / entry.removeprefix("/grade/")
        assert local.is_file() and local.stat().st_mode & stat.S_IXUSR
        assert options["serverFilesCourse"] == ["inplace_autograder/"]
        assert folder.name.endswith(exercise)
        html = (folder / "question.html").read_text()
        assert f'file-names="{folder.name}.ipynb"' in html and "<pl-external-grader-results>" in html
        assert (folder / "clientFilesQuestion" / f"{folder.name}.ipynb").is_file()
    assert set(infos) == {"03_residual_add", "02_data_trap"}
    assert len({i["uuid"] for i in infos.values()}) == 2
    dockerfile = (prairielearn_course / "graders" / "inplace-autograder" / "Dockerfile").read_text()
    assert "--index-url https://download.pytorch.org/whl/cpu" in dockerfile
    assert "bubblewrap" in dockerfile and "useradd --system --no-create-home" in dockerfile
    assert "docker build --platform linux/amd64" in dockerfile
    assert (prairielearn_course / "graders" / "inplace-autograder" / "course" / "pyproject.toml").is_file()


@pytest.mark.slow
def test_prairielearn_grades_a_correct_and_a_wrong_submission(prairielearn_course, tmp_path):
    submissions = (("a", CORRECT), ("d", partly_right(tmp_path / "hand-in")))
    roots = [grade_root(tmp_path / name, prairielearn_course, sub) for name, sub in submissions]
    run_sh = "serverFilesCourse/inplace_autograder/run.sh"
    procs = run_in_parallel([(["bash", str(r / run_sh), "data_trap"], platform_env(r)) for r in roots])
    for proc in procs:
        assert proc.returncode == 0, proc.stdout
    correct, wrong = (json.loads((r / "results" / "results.json").read_text()) for r in roots)
    assert correct["gradable"] is True and correct["score"] == 1.0
    assert all(t["points"] == t["max_points"] for t in correct["tests"])
    assert wrong["gradable"] is True and 0 < wrong["score"] < 1
    assert abs(wrong["score"] - sum(t["points"] for t in wrong["tests"]) / 10) < 1e-9
    hidden = [t for t in wrong["tests"] if t["name"].endswith("(hidden inputs)")]
    assert hidden and all("description" not in t and t["output"] == "" for t in hidden)
    assert any(t["points"] < t["max_points"] and t["message"] for t in wrong["tests"])  # that it failed, and why


def test_prairielearn_malformed_is_not_gradable(prairielearn_course, tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text('{"cells": [')
    root = grade_root(tmp_path, prairielearn_course, broken)
    config = root / "serverFilesCourse" / "inplace_autograder" / "autograder_config.json"
    assert run_prairielearn(root, config, "data_trap") == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["gradable"] is False and "not valid notebook JSON" in data["message"]
    # not an exercise of this export: the question is misconfigured, which the student sees, and exit 0
    assert run_prairielearn(root, config, "leaf_sgd") == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["gradable"] is False and "grader's fault" in data["message"]


def test_prairielearn_untouched_notebook_uses_no_attempt(prairielearn_course, tmp_path, monkeypatch):
    monkeypatch.setattr(container, "make_runner", FakeRunner())
    root = grade_root(tmp_path, prairielearn_course, ROOT / "exercises" / "02_data_trap.ipynb")
    config = root / "serverFilesCourse" / "inplace_autograder" / "autograder_config.json"
    assert run_prairielearn(root, config, "data_trap") == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["gradable"] is False and data["message"].startswith("You have not answered yet")
    assert "did not use up an attempt" in data["message"] and "score" not in data


def test_prairielearn_grader_fault_exits_0_and_is_not_gradable(prairielearn_course, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(container, "make_runner", FakeRunner(broken={"data_trap"}))
    root = grade_root(tmp_path, prairielearn_course, CORRECT)
    config = root / "serverFilesCourse" / "inplace_autograder" / "autograder_config.json"
    assert run_prairielearn(root, config, "data_trap") == 0  # PrairieLearn reads results.json only after exit 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["gradable"] is False and "grader's fault, not yours" in data["message"]
    assert "RuntimeError" not in json.dumps(data) and "RuntimeError" in capsys.readouterr().out
    assert stat.S_IMODE((root / "serverFilesCourse").stat().st_mode) == 0o700


STARTS_FIRST = r"""
import contextlib, json, sys
from pathlib import Path
import argparse
from autograder.bundle import container, grader
from autograder.platforms import gradescope
from autograder.runner import InProcessRunner
seen = {}

@contextlib.contextmanager
def watching(config):
    seen["loaded when the worker was launched"] = [m for m in ("torch", "nbformat") if m in sys.modules]
    yield InProcessRunner()

container.make_runner = watching
grader.run(gradescope.PLATFORM, Path(sys.argv[1]), argparse.Namespace())
seen["loaded by the grading"] = [m for m in ("torch", "nbformat") if m in sys.modules]
print(json.dumps(seen))
"""


def test_a_platforms_grader_starts_its_worker_before_it_imports_torch(tmp_path):
    """Importing a platform's grader imports neither torch nor nbformat, and run() launches the worker before
    either is imported: the two imports of torch (the grader's, the worker's) then share the cores."""
    probe = ("import sys; from autograder.platforms import platforms; platforms(); "
             "print(sorted(m for m in ('torch', 'nbformat', 'autograder.exercises', 'autograder.batch') "
             "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[]", (done.stdout, done.stderr[-2000:])

    root = config_root(tmp_path, BundleConfig(("data_trap",)), [SOLUTIONS / "02_data_trap.ipynb"])
    done = subprocess.run([sys.executable, "-c", STARTS_FIRST, str(root)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"loaded when the worker was launched": [],
                                                        "loaded by the grading": ["torch", "nbformat"]}
    assert json.loads((root / "results" / "results.json").read_text())["score"] == 10


# ---- a full disk ---------------------------------------------------------------------------------------------


class DiskFiller(FakeRunner):
    """Grades in process, after filling the disk the results go to (as an unsandboxed submission could)."""

    def __init__(self, where: Path):
        super().__init__()
        self.where = where

    def run(self, job):
        try:
            with open(self.where / "filler", "wb") as f:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
        except OSError:
            pass
        return super().run(job)


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MiB tmpfs (as root), so that filling it is quick and real."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode()[:200]}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_submission_that_fills_the_disk_still_gets_its_results(small_disk, monkeypatch):
    root = config_root(small_disk, BundleConfig(("data_trap",)), [SOLUTIONS / "02_data_trap.ipynb"])
    monkeypatch.setattr(container, "make_runner", DiskFiller(root / "results"))
    assert run_gradescope(root) == 0
    assert (root / "results" / "filler").stat().st_size > 1024 * 1024  # the disk was full when results were due
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 10 and data["tests"]


def test_a_grader_that_dies_leaves_the_reserved_result(tmp_path):
    """The result is reserved before student code runs: a grader killed later (out of memory, say) leaves the
    platform's result for a grader that did not finish, not nothing."""
    results = tmp_path / "results.json"
    container.reserve_results(results, gradescope.PLATFORM.broken(grader.NOT_FINISHED, 0.0))
    data = json.loads(results.read_text())  # trailing spaces are JSON's whitespace
    assert data["score"] == 0 and "did not finish" not in data["output"] and "stopped before" in data["output"]
    assert results.stat().st_size == container.RESERVED_BYTES
