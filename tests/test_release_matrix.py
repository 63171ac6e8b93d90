"""The torch releases the course is checked on: the README's "Which torch" table, pyproject's range, the
install script's pin and CI's command agree; scripts/check-release refuses what it cannot run; and
scripts/release-diff reports a difference where there is one, and none where there is none."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import tomllib
import torch
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CHECK_RELEASE = ROOT / "scripts" / "check-release"
RELEASE_DIFF = ROOT / "scripts" / "release-diff"


def readme_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## Which torch\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def checked_releases() -> dict[str, str]:
    """release -> what checks it, from the README's table (its first column a release such as 2.14.1)."""
    rows = re.findall(r"^\| *`?(\d+\.\d+\.\d+)`?[^|]*\|(.*)\|\s*$", readme_section(), re.MULTILINE)
    return {release: checked_by for release, checked_by in rows}


def torch_requirement() -> Requirement:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (found,) = [Requirement(d) for d in dependencies if Requirement(d).name == "torch"]
    return found


def test_the_readme_names_two_releases_each_with_what_checks_it():
    releases = checked_releases()
    assert len(releases) >= 2, releases
    for release, checked_by in releases.items():
        assert "`" in checked_by, f"{release}: the row names no command that checks it"


def test_pyproject_admits_every_checked_release():
    requirement = torch_requirement()
    for release in checked_releases():
        assert requirement.specifier.contains(release), f"pyproject's {requirement} refuses torch {release}"


def test_the_installed_torch_is_admitted():
    installed = Version(torch.__version__).base_version
    assert torch_requirement().specifier.contains(installed), (installed, str(torch_requirement()))


def test_the_install_pin_and_ci_cover_the_releases():
    pins = re.findall(r"torch==(\d+\.\d+\.\d+)", (ROOT / "scripts" / "install").read_text())
    ci = (ROOT / ".ci" / "run").read_text()
    others = re.findall(r"scripts/check-release (\d+\.\d+\.\d+)", ci)
    assert sorted(set(pins) | set(others)) == sorted(checked_releases()), (pins, others, checked_releases())
    assert "scripts/install" in ci


def run_script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(args[0]), *args[1:]], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("args", [(), ("two",), ("2.14.1", "lint")], ids=["none", "not-a-release", "no-such-step"])
def test_check_release_refuses_bad_arguments(args):
    done = run_script(str(CHECK_RELEASE), *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "check-release" in done.stderr


def test_check_release_skips_a_step_without_its_torch(tmp_path):
    """An environment that lacks the release (here: one that does not exist) fails the step, loudly."""
    done = run_script(str(CHECK_RELEASE), "0.0.1", "grade", env={"RELEASE_VENV": str(tmp_path / "none")})
    try:
        assert done.returncode == 1, done.stdout + done.stderr
        assert "grade: skipped" in done.stdout
        assert re.search(r"grade\s+skipped", done.stdout)
    finally:
        subprocess.run(["rm", "-rf", str(ROOT / ".release-check" / "0.0.1")], check=False)


def write_result(folder: Path, submission: str, output: str, score: float) -> None:
    (folder / submission).mkdir(parents=True)
    result = {"status": "passed" if score == 10 else "failed", "score": score, "max_score": 10, "output": "",
              "execution_time": score / 7, "tests": [{"name": "forward", "score": score, "status": "passed",
                                                      "output": output}]}
    (folder / submission / "results.json").write_text(json.dumps(result))


def write_page(folder: Path, printed: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(error)", outputs=[nbformat.v4.new_output("stream", text=printed)]),
                nbformat.v4.new_code_cell("print(seconds)", outputs=[
                    nbformat.v4.new_output("stream", text=f"took {len(printed) / 10} s at 0x{id(folder):x}")])]
    (folder / "book/_build/jupyter_execute/chapters").mkdir(parents=True)
    nbformat.write(nb, folder / "book/_build/jupyter_execute/chapters/01.ipynb")


def test_release_diff_reports_words_and_counts_numbers_apart(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, op, output in ((a, "Relu", "right"), (b, "ReluBackward0", "right, and then some")):
        write_result(folder / "grades-solutions", "leaf_sgd", output, 10)
        write_result(folder / "grades-starters", "leaf_sgd", "not attempted", 0)
        write_page(folder, f"output 0 of {op}")
    done = subprocess.run([sys.executable, str(RELEASE_DIFF), str(a), str(b)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "grades-solutions/leaf_sgd: check 'forward' output" in done.stdout
    assert "grades-starters/leaf_sgd" not in done.stdout
    assert "'print(error)' prints otherwise" in done.stdout
    assert "+output 0 of ReluBackward0" in done.stdout
    assert "2 cells compared, 1 differ in numbers only" in done.stdout
    assert done.stdout.strip().endswith("1 grade fields differ; 1 book cells print other words")


def test_release_diff_finds_nothing_between_equal_runs(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        write_result(folder / "grades-solutions", "leaf_sgd", "right", 10)
        write_result(folder / "grades-starters", "leaf_sgd", "not attempted", 0)
        write_page(folder, "output 0 of Relu")
    done = subprocess.run([sys.executable, str(RELEASE_DIFF), str(a), str(b)], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip().endswith("0 grade fields differ; 0 book cells print other words"), done.stdout
