"""Why the tests give every Python they start one intra-op thread (tests/conftest.py): the capstone's training
(the heaviest code a learner's answer cell runs) in a fresh process, while the other cores are busy, as they are
when two test workers share two cores, with torch's default thread count and with OMP_NUM_THREADS=1.

Run: `.venv/bin/python benchmarks/threads.py` (it keeps every core busy with a spinning process meanwhile, and
prints the median of 3 runs of each, in alternation, and the ratio). On idle cores the two come out alike.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORK = f"""
import sys, time, torch
sys.path.insert(0, {str(ROOT)!r})
from autograder.reference_store import known_submissions
# a correct answer from the capstone's catalogue: the training script, which trains when run as a cell runs it
code = known_submissions("capstone").correct["torch.softmax and F.normalize"]
namespace = {{"__name__": "__main__", "print": lambda *a, **k: None}}
exec(code, namespace)  # trains once: torch's first-use costs
start = time.perf_counter()
for _ in range(3):
    namespace["train"]()
print(time.perf_counter() - start)
"""


def seconds(threads: str | None) -> float:
    """The training's time (three runs, after a first), as the process measured it."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if threads:
        env["OMP_NUM_THREADS"] = threads
    done = subprocess.run([sys.executable, "-c", WORK], env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def main(rounds: int = 3) -> None:
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        default, one = [], []
        for _ in range(rounds):
            default.append(seconds(None))
            one.append(seconds("1"))
    finally:
        for spinner in spinners:
            spinner.kill()
    a, b = statistics.median(default), statistics.median(one)
    print(f"{os.cpu_count()} cores, all busy: torch's default threads {a:.2f} s; OMP_NUM_THREADS=1 {b:.2f} s; "
          f"ratio {a / b:.1f}")


if __name__ == "__main__":
    main()
