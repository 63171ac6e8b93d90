"""House rule: adding an exercise touches its module, its reference, its solution notebook and its test, and
nothing else. Everything else that needs the exercises (the catalogue tests, the sample class, the book, the
command line) takes them from the registry (autograder/exercises/__init__.py), or is generated from those four
files: `autograder publish` (the public data), `autograder assign` (the exercise notebook), samples/make_class.py
(the sample class).

The proof adds a toy exercise to a copy of the working tree, the way the README says, runs the generators, and
checks that every consumer picks it up. The fast test below keeps hand-written lists of the exercises out.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site as sitelib
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder.exercises import EXERCISES
from tests.conftest import ROOT

ID, NUMBER = "scaled_relu", max(e.number for e in EXERCISES.values()) + 1
NAME = f"{NUMBER:02d}_{ID}"

SPEC = f'''"""Exercise {NUMBER}: `y *= 2` after a ReLU, which saved its output for backward (a toy)."""

from __future__ import annotations

import torch

from .. import probes
from ..core import checks
from ..core.messages import INPLACE_ERROR
from ..core.spec import Check, Exercise, ExpectedError, Scenario, Symbol
from ..probes import GRAD
from . import _contract as contract


def _draw(size: int):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict:
        return {{"x": torch.randn(size, generator=g, dtype=torch.float64).to(dtype),
                "grad_output": torch.randn(size, generator=g, dtype=torch.float64).to(dtype)}}

    return draw


def _run(ns, inputs, device, obs):
    x = inputs["x"].requires_grad_(True)
    out = ns["scaled_relu"](x)
    obs["output"] = out.detach().clone()
    out.backward(inputs["grad_output"])
    probes.observe_grad(obs, "x", x)


PUBLIC, HIDDEN = "public", "hidden"
FORWARD = checks.matches_reference(("output",), "Forward output")
BACKWARD = checks.completes((PUBLIC, HIDDEN), "Backward")

EXERCISE = Exercise(
    id="{ID}",
    number={NUMBER},
    title="The scaled ReLU",
    defines=(Symbol("scaled_relu", "function", ("x",)),),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _draw(5), _run, ("output", GRAD), public=True),
        Scenario(HIDDEN, _draw(9), _run, ("output", GRAD)),
    ),
    checks=checks.gate_checks(  # nothing counts while the bug is there: the forward right and backward running
        checks.all_of(FORWARD, BACKWARD), "the output right and backward running",
        Check("forward", 4, "The output is 2 * relu(x).", FORWARD, public=True),
        Check("backward runs", 2, "Backward runs through scaled_relu.", BACKWARD, public=True),
        Check("gradients", 4, "The gradient of x matches the reference.",
              checks.matches_reference((GRAD,), "Gradient", (HIDDEN,))),
    ),
)

CONTRACT = contract.Contract("scaled_relu", (
    contract.Dimension(contract.LAYOUT, ("contiguous",), "a tensor x"),
))
'''

REFERENCE = f'''"""Reference of exercise {NUMBER}, {ID}: twice the ReLU, into a new tensor."""

from __future__ import annotations

import torch


def scaled_relu(x: torch.Tensor) -> torch.Tensor:
    return 2 * torch.relu(x)


REFERENCE = {{"scaled_relu": scaled_relu}}

BROKEN = "def scaled_relu(x):\\n    y = x.relu()\\n    y *= 2\\n    return y\\n"
CORRECT = {{
    "multiply into a new tensor": "def scaled_relu(x):\\n    return x.relu() * 2\\n",
    "scale first, then relu": "import torch\\n\\n\\ndef scaled_relu(x):\\n    return torch.relu(x * 2)\\n",
}}
WRONG = {{
    ".data hides the doubling": ("def scaled_relu(x):\\n    y = x.relu()\\n    y.data *= 2\\n    return y\\n",
                                 "gradients"),
    "three times": ("def scaled_relu(x):\\n    return 3 * x.relu()\\n", {{"forward", "gradients"}}),
    "starter without the raise": ("import torch\\n\\n\\ndef scaled_relu(x):\\n"
                                  "    # TODO: your fix goes here (see the task above).\\n    pass\\n",
                                  {{"forward", "backward runs", "gradients"}}),
}}
SAYS = {{".data hides the doubling": ("Gradient",)}}
'''

TEST = f'''"""Exercise {NUMBER} ({ID}): its own tests; its catalogue is in references/{ID}.py."""

from autograder.reference_store import known_submissions
from tests.conftest import failing

ID = "{ID}"


def test_the_report_fails_in_backward(grade):
    assert {{"backward runs", "gradients"}} <= failing(grade(ID, known_submissions(ID).broken))
'''


def solution_notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(metadata={
        "autograder": {"exercise": ID},
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    })
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb.cells = [
        md(f"# Exercise {NUMBER}: the scaled ReLU\n\n`relu` saves its output for backward; `y *= 2` changes it."),
        code("import torch"),
        code("x = torch.randn(5, requires_grad=True)\ny = x.relu()\ny *= 2\ny.sum().backward()",
             metadata={"tags": ["raises-exception"]}),
        md("## Your task\n\nDefine `scaled_relu(x)`: `2 * relu(x)`, with a gradient."),
        code("import torch\n\n\ndef scaled_relu(x):\n    ### BEGIN SOLUTION\n    return x.relu() * 2\n"
             "    ### END SOLUTION", metadata={"tags": ["answer"]}),
        md("## Check your work"),
        code(f'from autograder import check\n\ncheck("{ID}")'),
    ]
    return nb


def own_files(exercise_id: str, number: int) -> set[str]:
    """The files an exercise owns, as the README lists them."""
    return {f"autograder/exercises/{exercise_id}.py", f"references/{exercise_id}.py",
            f"solutions/{number:02d}_{exercise_id}.ipynb", f"tests/exercises/test_{exercise_id}.py"}


GENERATED = ("autograder/exercises/public/", "exercises/", "samples/class/", "autograder/workshop/course.json",
             "autograder/locale/", "book/locale/", "solutions/zh/")
"""What the generators write (publish, assign, samples/make_class.py, workshop misconceptions, and the translations'
catalogues and notebooks, scripts/translations): never a list kept by hand."""


def working_tree() -> list[str]:
    """The files git knows or would add (tracked, and untracked but not ignored), as they are on disk."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return sorted({f for f in listed.split("\0") if f and os.path.lexists(ROOT / f)})


def python_of(copy: Path) -> Path:
    """A Python that imports the copy's package, even isolated (`python -I`, as the grader's workers start), where
    this environment's editable install would give the checkout's: a virtual environment whose site-packages puts
    the copy first, then this environment's packages (without their .pth files, the editable install's among them)."""
    venv = copy.parent / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "course.pth").write_text("\n".join([str(copy), *sitelib.getsitepackages()]) + "\n")
    return venv / "bin" / "python"


def run(copy: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOGRADER_REFERENCES", "PYTHONPATH")}
    proc = subprocess.run([str(copy.parent / "venv" / "bin" / "python"), *args], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{args}: {proc.stdout[-4000:]}{proc.stderr[-4000:]}"
    return proc


WHAT_THE_SAMPLE_CLASS_HOLDS = f"""
import json, runpy
from autograder.exercises import get
make_class = runpy.run_path("samples/make_class.py")
print(json.dumps([make_class["STUDENTS"], make_class["frank_breakage"](get("{ID}")).verdict]))
"""
"""Its students, and the verdict frank's file of the toy must get (run in the copy, whose registry has the toy)."""


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A copy of the working tree with the toy exercise added as the README says, and the generators run."""
    copy = tmp_path_factory.mktemp("course") / "course"
    for name in working_tree():
        source, target = ROOT / name, copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)
    assert not [p for p in own_files(ID, NUMBER) if (copy / p).exists()]
    (copy / f"autograder/exercises/{ID}.py").write_text(SPEC)
    (copy / f"references/{ID}.py").write_text(REFERENCE)
    nbformat.write(solution_notebook(), copy / f"solutions/{NAME}.ipynb")
    (copy / f"tests/exercises/test_{ID}.py").write_text(TEST)
    python_of(copy)
    assert run(copy, "-I", "-c", "import autograder; print(autograder.__file__)").stdout.startswith(str(copy))
    run(copy, "-m", "autograder", "publish")
    run(copy, "-m", "autograder", "assign")
    run(copy, "samples/make_class.py")
    return copy


@pytest.mark.slow
def test_a_new_exercise_needs_only_its_own_files(course, tmp_path):
    # the command line and the generated files know it
    assert re.search(rf"\b{NUMBER}\b.*{ID}.*The scaled ReLU", run(course, "-m", "autograder", "list").stdout)
    assert {p.name for p in (course / "autograder/exercises/public").glob(f"{ID}.*")} == {f"{ID}.json",
                                                                                          f"{ID}.safetensors"}
    starter = nbformat.read(course / f"exercises/{NAME}.ipynb", as_version=4)
    assert any("NotImplementedError" in c.source for c in starter.cells) and starter.metadata.autograder.exercise == ID
    run(course, "-m", "autograder", "publish", "--check")
    run(course, "-m", "autograder", "assign", "--check")

    # the generic tests collect it, and its solution, its catalogue and its own test pass
    proc = run(course, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider", "-v",
               "tests/exercises/test_catalogue.py", f"tests/exercises/test_{ID}.py", "tests/test_sample_class.py",
               "tests/test_no_reference_in_package.py", "tests/test_contracts_spanned.py",
               "-k", f"{ID} or committed_class")
    passed = set(re.findall(r"^(tests/.+?) PASSED", proc.stdout, re.M))
    catalogue = "tests/exercises/test_catalogue.py::"
    expected = {f"{catalogue}test_solution_scores_full[{ID}]", f"{catalogue}test_broken_report_code_scores_zero[{ID}]",
                f"{catalogue}test_the_starter_without_its_raise_is_catalogued_to_fail_every_check[{ID}]",
                f"{catalogue}test_catalogue_names_checks_the_exercise_has[{ID}]",
                f"{catalogue}test_correct_alternative_passes[{ID}-multiply into a new tensor]",
                f"{catalogue}test_wrong_fix_fails_for_the_right_reason[{ID}-.data hides the doubling]",
                f"tests/exercises/test_{ID}.py::test_the_report_fails_in_backward",
                f"tests/test_contracts_spanned.py::test_the_contract_is_declared[{ID}]",
                "tests/test_sample_class.py::test_the_committed_class_is_what_make_class_writes",
                *(f"tests/test_no_reference_in_package.py::{name}[{ID}]" for name in (
                    "test_reference_defines_what_the_exercise_asks_for", "test_exercise_module_holds_no_reference",
                    "test_importing_the_exercise_module_scores_nothing"))}
    assert expected <= passed, proc.stdout[-4000:]

    # the sample class has it, for every student, and grades it to what each student stands for
    students, frank = json.loads(run(course, "-c", WHAT_THE_SAMPLE_CLASS_HOLDS).stdout)
    handed_in = [course / "samples/class" / student / f"{NAME}.ipynb" for student in students]
    assert all(p.is_file() for p in handed_in)
    out = tmp_path / "grades"
    run(course, "-m", "autograder", "grade", *map(str, handed_in), "--out", str(out), "--jobs", "1", "--quiet",
        "--no-sandbox")  # the sandbox shows a worker this environment's packages, not the copy's venv
    statuses = {Path(r["submission_path"]).parent.name: r["status"]
                for r in (json.loads(p.read_text()) for p in out.glob("*/results.json"))}
    assert statuses == {"ada": "passed", "bob": "not_attempted", "cleo": "failed", "dan": "failed", "eve": "passed",
                        "frank": frank}

    # the book has a page for it, after the others, in the table of contents
    config = yaml.safe_load((course / "book/_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"  # the chapters' cells are tests/test_book.py's business (-W there)
    for extension, folder in config.get("sphinx", {}).get("local_extensions", {}).items():
        config["sphinx"]["local_extensions"][extension] = str(course / "book" / folder)
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config))
    build = run(course, "-c", "from jupyter_book.cli.main import main; main()", "build", "book",
                "--config", str(tmp_path / "_config.yml"), "--path-output", str(tmp_path / "book"))
    warnings = re.findall(r"WARNING: .*", re.sub(r"\x1b\[[0-9;]*m", "", build.stdout + build.stderr))
    assert [w for w in warnings if "glue data" not in w] == []  # unexecuted, the chapters have no glue: nothing else
    html = tmp_path / "book" / "_build" / "html"
    assert (html / "exercises" / f"{NAME}.html").is_file()
    pages = re.findall(r'href="exercises/(\d\d_\w+)\.html"', (html / "intro.html").read_text())
    assert list(dict.fromkeys(pages)) == [f"{e.number:02d}_{e.id}" for e in EXERCISES.values()] + [NAME]


HAND_WRITTEN_LISTS_ALLOWED = {
    # Teaching prose, not an inventory: a case study per reported failure, each ending with its exercise.
    "book/chapters/08_case_studies.md",
    # The reading plan of the book: chapters and exercises interleaved in the order they are taught, with times.
    "book/intro.md",
    # The live view's words written for the wrong answers that lead its labels, with their proofs: keyed by each
    # catalogue's own answer names, and held to the catalogues by tests/test_workshop_misconceptions.py, which
    # fails on words no answer reaches and on an answer left without words.
    "autograder/workshop/misconceptions.py",
}
"""Files that may name every exercise. Anything else that needs the list takes it from the registry."""


def test_no_file_lists_every_exercise_by_hand():
    if len(EXERCISES) < 2:
        pytest.skip("a list needs two exercises")
    owned = set().union(*(own_files(e.id, e.number) for e in EXERCISES.values()))
    listing = []
    for name in working_tree():
        path = ROOT / name
        if name in owned or name.startswith(GENERATED) or name in HAND_WRITTEN_LISTS_ALLOWED or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary
        if all(exercise_id in text for exercise_id in EXERCISES):
            listing.append(name)
    assert not listing, (f"these files name every exercise, a list to keep up by hand: {listing}; take the "
                         "exercises from autograder.exercises.EXERCISES instead (or generate the file)")
