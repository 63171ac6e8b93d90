"""One submission graded from a cold start, against one `import torch`: what a platform pays per submission
(Gradescope and PrairieLearn start a fresh container for each) and what `autograder check --sandbox` pays
on a laptop. Each graded run starts a grader and its sandboxed worker, and both import torch.

In one run, alternating, median of N rounds: `python -c "import torch"`; the Gradescope bundle's
run_autograder on one submission (the bundle is exported into a temporary folder and run as the tests run
it: AUTOGRADER_ROOT for /autograder, this environment's python3 first on PATH); `autograder check --sandbox`
on the same notebook.

Run: `.venv/bin/python benchmarks/cold_single.py [--rounds 7] [--submission NOTEBOOK]`. Prints each round's
wall clock, the medians and their ratios to the import of torch.
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


def gradescope_root(folder: Path, submission: Path, exercise: str) -> Path:
    """/autograder as Gradescope lays it out: the unzipped bundle in source/, the submission in submission/."""
    from autograder.export import gradescope
    from autograder.export.container import BundleConfig

    bundle = gradescope.export(folder / "zip", BundleConfig(exercises=(exercise,)))
    root = folder / "autograder"
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(root / "source")
    (root / "submission").mkdir()
    shutil.copy(submission, root / "submission" / submission.name)
    return root


def wall(argv: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):  # 1: `check` on a submission that fails a check
        raise SystemExit(f"{argv[:3]} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return seconds


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--submission", type=Path, default=SUBMISSION)
    args = p.parse_args()
    from autograder.submission import answer_code

    exercise = answer_code(args.submission).exercise
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="autograder-cold-") as tmp:
        root = gradescope_root(Path(tmp), args.submission, exercise)
        env = {**os.environ, "AUTOGRADER_ROOT": str(root),
               "PATH": str(Path(python).parent) + os.pathsep + os.environ["PATH"]}
        commands = {
            "import torch": ([python, "-c", "import torch"], None),
            "Gradescope run_autograder": (["bash", str(root / "source" / "run_autograder")], env),
            "check --sandbox": ([python, "-m", "autograder", "check", str(args.submission), "--sandbox"], None),
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, (argv, environment) in commands.items():
                times[name].append(wall(argv, environment))
        graded = json.loads((root / "results" / "results.json").read_text())
    load = os.getloadavg()[0]
    print(f"{args.submission.name} ({exercise}; Gradescope score {graded['score']:g}), "
          f"{args.rounds} rounds, {os.cpu_count()} cores, load average {load:.1f}\n")
    names = list(commands)
    print("| round | " + " | ".join(f"{n} (s)" for n in names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for i in range(args.rounds):
        print(f"| {i + 1} | " + " | ".join(f"{times[n][i]:.2f}" for n in names) + " |")
    medians = {n: statistics.median(times[n]) for n in names}
    torch_import = medians["import torch"]
    print("\nmedian: " + "; ".join(f"{n} {m:.2f} s ({m / torch_import:.2f}x import torch)" for n, m in medians.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
