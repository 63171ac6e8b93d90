"""One submission graded from a cold start, against one `import torch`: what a platform pays per submission
(Gradescope and PrairieLearn start a fresh container for each) and what `autograder check --sandbox` pays
on a laptop. Each graded run starts a grader and its sandboxed worker, and both import torch.

In one run, alternating, median of N rounds, all with the python of the environment the bundle's setup.sh
builds (made first in a temporary folder, about 30 s; `--this-python` uses this one instead):
`python -c "import torch"`; the same and one optimizer step (which makes torch import dynamo: the floor
of an exercise whose trials step an optimizer); the Gradescope bundle's run_autograder on one submission
(the bundle is exported into a temporary folder and run as the tests run it: AUTOGRADER_ROOT for
/autograder, AUTOGRADER_PYTHON for its interpreter); `autograder check --sandbox` on the same notebook.

Run: `.venv/bin/python benchmarks/cold_single.py [--rounds 7] [--submission NOTEBOOK | --all] [--this-python]`.
Prints each round's wall clock, the medians and their ratios to the import of torch; with `--all`, one row
of medians and ratios per exercise (its solution notebook), each measured in its own alternating rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
(SUBMISSION,) = (ROOT / "solutions").glob("*_data_trap.ipynb")


def bundle_python(root: Path, folder: Path) -> Path:
    """The grader's environment as the bundle's setup.sh builds it: a virtual environment with the pinned CPU
    build of torch and the bundle's own copy of the course, without extras (the test suite's extras make
    nbformat's import about a second slower: jsonschema then finds rfc3987_syntax, which builds a grammar)."""
    from autograder.bundle.source import TORCH_PIN

    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, TORCH_PIN], check=True)
    subprocess.run([*pip, str(root / "source" / "course")], check=True)
    return venv / "bin" / "python"


def gradescope_root(folder: Path, submission: Path, exercise: str) -> Path:
    """/autograder as Gradescope lays it out: the unzipped bundle in source/, the submission in submission/."""
    from autograder.bundle.config import BundleConfig
    from autograder.platforms import gradescope

    bundle = gradescope.export(folder / "zip", BundleConfig(exercises=(exercise,)))
    root = folder / "autograder"
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(root / "source")
    (root / "submission").mkdir()
    shutil.copy(submission, root / "submission" / submission.name)
    return root


def wall(argv: list[str], env: dict[str, str] | None, cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    if done.returncode != 0:  # a solution passes `check`; anything else did not measure what it says
        raise SystemExit(f"{argv[:3]} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return seconds


OPTIMIZER_STEP = ("import torch; p = torch.zeros(1, requires_grad=True); p.sum().backward(); "
                  "torch.optim.SGD([p], lr=0.1).step()")


def measure(python: str, folder: Path, submission: Path, rounds: int) -> tuple[dict[str, list[float]], dict]:
    """The four commands, alternating, `rounds` times; and the Gradescope results of the last run."""
    from autograder.intake.submission import answer_code

    root = gradescope_root(folder, submission, answer_code(submission).declared_exercise)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": python}
    commands = {
        "import torch": ([python, "-c", "import torch"], None),
        "import torch, one optimizer step": ([python, "-c", OPTIMIZER_STEP], None),
        "Gradescope run_autograder": (["bash", str(root / "source" / "run_autograder")], env),
        "check --sandbox": ([python, "-m", "autograder", "check", str(submission), "--sandbox"], None),
    }
    elsewhere = folder / "cwd"  # not beside the folder named autograder/, which `-m autograder` would meet
    elsewhere.mkdir()
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, (argv, environment) in commands.items():
            times[name].append(wall(argv, environment, cwd=elsewhere))
    return times, json.loads((root / "results" / "results.json").read_text())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--submission", type=Path, default=SUBMISSION)
    p.add_argument("--all", action="store_true", help="every exercise's solution notebook, one row each")
    p.add_argument("--this-python", action="store_true",
                   help="run everything with this environment's python instead of building the bundle's")
    args = p.parse_args()
    from autograder.exercises import EXERCISES
    from autograder.intake.submission import answer_code

    submissions = sorted((ROOT / "solutions").glob("*.ipynb")) if args.all else [args.submission.resolve()]
    with tempfile.TemporaryDirectory(prefix="autograder-cold-") as tmp:
        folder = Path(tmp)
        python = sys.executable
        if not args.this_python:
            first = answer_code(submissions[0]).declared_exercise
            python = str(bundle_python(gradescope_root(folder / "venv-source", submissions[0], first), folder))
        measured = {}
        for n, submission in enumerate(submissions):
            (folder / str(n)).mkdir()
            measured[submission] = measure(python, folder / str(n), submission, args.rounds)
    where = "this environment" if args.this_python else "the environment setup.sh builds"
    print(f"{args.rounds} rounds, {where}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}\n")
    if not args.all:
        ((submission, (times, graded)),) = measured.items()
        exercise = answer_code(submission).declared_exercise
        steps = "step an optimizer" if "torch._dynamo" in EXERCISES[exercise].preload else "step no optimizer"
        print(f"{submission.name} ({exercise}, whose trials {steps}; Gradescope score {graded['score']:g})\n")
        names = list(times)
        print("| round | " + " | ".join(f"{n} (s)" for n in names) + " |")
        print("|---" * (len(names) + 1) + "|")
        for i in range(args.rounds):
            print(f"| {i + 1} | " + " | ".join(f"{times[n][i]:.2f}" for n in names) + " |")
        medians = {n: statistics.median(times[n]) for n in names}
        torch_import = medians["import torch"]
        print("\nmedian: " + "; ".join(f"{n} {m:.2f} s ({m / torch_import:.2f}x import torch)"
                                       for n, m in medians.items()))
        return 0
    print("| exercise | its trials step an optimizer | score | import torch (s) | import torch, one optimizer step (s) "
          "| run_autograder (s) | run_autograder / import torch "
          "| check --sandbox (s) | check --sandbox / import torch |")
    print("|---" * 9 + "|")
    for submission, (times, graded) in measured.items():
        exercise = answer_code(submission).declared_exercise
        m = {n: statistics.median(v) for n, v in times.items()}
        torch_import = m["import torch"]
        print(f"| {exercise} | {'yes' if 'torch._dynamo' in EXERCISES[exercise].preload else 'no'} "
              f"| {graded['score']:g} | {torch_import:.2f} | {m['import torch, one optimizer step']:.2f} "
              f"| {m['Gradescope run_autograder']:.2f} | {m['Gradescope run_autograder'] / torch_import:.2f}x "
              f"| {m['check --sandbox']:.2f} | {m['check --sandbox'] / torch_import:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
