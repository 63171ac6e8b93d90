"""Throughput of two checkouts of this grader, side by side in one run: `autograder grade` on the same N
copies of the sample class, alternating between the two, so that the machine's load falls on both alike.

Used for the trust work's goal (grading 240 submissions within 10% of the wall time before it): pass the
checkout before the change as BEFORE (a `git worktree` with its own .venv, made by its scripts/install)
and this one as AFTER (the default).

Run: `.venv/bin/python benchmarks/before_after.py /path/to/before [--after .] [--copies 240] [--rounds 3]
[--submissions DIR] [--exercises ID,ID]`. The submissions are copies of the sample class (or of DIR), only
of the exercises named where given: both checkouts must know the exercises and their signatures, so a
comparison across a change of exercises takes the older checkout's sample class and the exercises both
share. Prints a markdown table: each round's wall clock for both, and the ratio after/before of the medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def copies(target: Path, count: int, source: Path, exercises: list[str] | None) -> Path:
    """`count` submissions: the notebooks under `source` (of these exercises only, by file name) again and
    again, under distinct names."""
    originals = sorted(p for p in source.rglob("*.ipynb")
                       if exercises is None or any(p.stem.endswith(f"_{e}") for e in exercises))
    if not originals:
        raise SystemExit(f"no submissions under {source} for {exercises}")
    folder = target / "class"
    folder.mkdir(parents=True)
    for i in range(count):
        source = originals[i % len(originals)]
        shutil.copy(source, folder / f"{source.parent.name}-{i:04d}-{source.name}")
    return folder


def grade_seconds(checkout: Path, folder: Path, out: Path, jobs: int) -> float:
    shutil.rmtree(out, ignore_errors=True)
    command = [str(checkout / ".venv" / "bin" / "autograder"), "grade", str(folder), "--out", str(out),
               "--jobs", str(jobs), "--device", "cpu", "--quiet"]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: grade failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before", type=Path)
    p.add_argument("--after", type=Path, default=ROOT)
    p.add_argument("--copies", type=int, default=240)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--submissions", type=Path, default=ROOT / "samples" / "class")
    p.add_argument("--exercises", type=lambda s: s.split(","), default=None)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="autograder-before-after-") as tmp:
        folder = copies(Path(tmp), args.copies, args.submissions, args.exercises)
        times: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(args.rounds):
            for side, checkout in (("before", args.before), ("after", args.after)):
                times[side].append(grade_seconds(checkout.resolve(), folder, Path(tmp) / side, args.jobs))
    print(f"{args.copies} submissions from {args.submissions} ({', '.join(args.exercises or ['every exercise'])}), "
          f"--jobs {args.jobs}, load average {os.getloadavg()[0]:.1f}\n")
    print("| round | before (s) | after (s) |\n|---|---|---|")
    for i, (b, a) in enumerate(zip(times["before"], times["after"]), 1):
        print(f"| {i} | {b:.1f} | {a:.1f} |")
    before, after = statistics.median(times["before"]), statistics.median(times["after"])
    print(f"\nmedian: before {before:.1f} s, after {after:.1f} s; after/before = {after / before:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
