"""What the grader pays for a submission built to cost it (issue 29 §3), beside an honest one, in one run:
residual_add's solution followed by 40,000 blank lines, the solution followed by 300 `%time` lines (81 kB), and
its documented bug placed at line 40,001. For each: the seconds the grader's own process spends reading it
(intake: `answer_code`, median of repeats) and that cost as a ratio to the honest notebook's; with `--batch`,
also the wall seconds of a one-file `autograder grade` (sandboxed, `--timeout 30`) and the verdict.

Run: `.venv/bin/python benchmarks/hostile_text.py [--repeats N] [--batch]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.intake.submission import answer_code, is_answer_cell  # noqa: E402
from autograder.reference_store import known_submissions  # noqa: E402
from tests.conftest import EXERCISE_NOTEBOOKS, solution_code  # noqa: E402

EXERCISE = "residual_add"


def notebook(cell: str) -> str:
    nb = nbformat.read(next(EXERCISE_NOTEBOOKS.glob(f"*_{EXERCISE}.ipynb")), as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if is_answer_cell(c))
    nb.cells[at] = nbformat.v4.new_code_cell(cell, metadata={"tags": ["answer"]})
    return nbformat.writes(nb)


def files() -> dict[str, str]:
    solution, broken = solution_code(EXERCISE), known_submissions(EXERCISE).broken
    timed = "".join(f"%time total_{i} = [{', '.join(['1'] * 65)}]\n" for i in range(300))
    return {"honest.ipynb": notebook(solution), "blank_lines.ipynb": notebook(solution + "\n" * 40_000),
            "time_lines.ipynb": notebook(solution + "\n" + timed),
            "high_line.ipynb": notebook("\n" * 40_000 + broken)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timings of each reading (the median is shown)")
    parser.add_argument("--batch", action="store_true", help="also grade each file alone with `autograder grade`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        read = {}
        for name, text in files().items():
            path = folder / name
            path.write_text(text)
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                answer_code(path)
                times.append(time.perf_counter() - start)
            read[name] = statistics.median(times)
        for name, seconds in read.items():
            line = f"{name:20} {len((folder / name).read_bytes()):>8} bytes  read {seconds:8.4f} s  " \
                   f"x{seconds / read['honest.ipynb']:6.1f} honest"
            if args.batch:
                alone, out = folder / f"alone_{name}", folder / f"out_{name}"
                alone.mkdir()
                (alone / name).write_bytes((folder / name).read_bytes())
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "autograder", "grade", str(alone), "--exercise", EXERCISE,
                                "--out", str(out), "--jobs", "1", "--timeout", "30", "--quiet"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                result = json.loads((out / name / "results.json").read_text())
                line += f"  batch {time.perf_counter() - start:6.1f} s  {result['status']} {result['score']}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
