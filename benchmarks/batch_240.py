"""A batch of 240 submissions, graded by two checkouts side by side in one run, in wall time and in CPU time:
`autograder grade` on the same 240 copies of the sample class with `--jobs 2`, the two checkouts in turn (the
order swapped every round). CPU time is the grader's and everything it starts (its sandboxed workers and
their jobs), counted by a cpuacct cgroup per run (cputime.py: as root, cgroup v1; "n/a" elsewhere): on a
machine shared with other work, wall time moves with their load, CPU time far less.

Run: `.venv/bin/python benchmarks/batch_240.py BEFORE [--after AFTER] [--submissions DIR] [--copies 240]
[--rounds 5] [--jobs 2] [--exercises ID,ID]`, BEFORE (and AFTER, this checkout unless given) a checkout with its
own .venv (made by its scripts/install, or `pip install torch==2.13.0 && pip install -e .`: grading needs no
extra). The copies are of this checkout's samples/class, or of DIR: both checkouts must know its exercises'
signatures, so a comparison of two older commits takes the older one's sample class. Prints each round and the
medians, with the ratios after/before.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from before_after import copies  # noqa: E402 - a script's neighbour
from cputime import CpuGroup  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def grade(checkout: Path, folder: Path, out: Path, jobs: int, name: str) -> tuple[float, float | None]:
    """Wall and CPU seconds of one `autograder grade` of `folder` by `checkout`."""
    shutil.rmtree(out, ignore_errors=True)
    command = [str(checkout / ".venv" / "bin" / "autograder"), "grade", str(folder), "--out", str(out),
               "--jobs", str(jobs), "--device", "cpu", "--quiet"]
    group = CpuGroup.make(name)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True,
                          preexec_fn=group.enter if group is not None else None)
    wall = time.perf_counter() - start
    cpu = group.seconds() if group is not None else None
    if group is not None:
        group.close()
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: grade failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, cpu


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before", type=Path)
    p.add_argument("--after", type=Path, default=ROOT)
    p.add_argument("--submissions", type=Path, default=ROOT / "samples" / "class")
    p.add_argument("--copies", type=int, default=240)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--exercises", help="ID,ID: copies of these exercises' submissions only (e.g. those whose "
                                       "scenarios the two checkouts share, to measure the grader alone)")
    args = p.parse_args()
    sides = [("before", args.before.resolve()), ("after", args.after.resolve())]
    results: dict[str, list[tuple[float, float | None]]] = {"before": [], "after": []}
    loads = []
    with tempfile.TemporaryDirectory(prefix="autograder-batch-240-") as tmp:
        folder = copies(Path(tmp), args.copies, args.submissions.resolve(),
                        args.exercises.split(",") if args.exercises else None)
        for i in range(args.rounds):
            for side, checkout in sides if i % 2 == 0 else sides[::-1]:
                results[side].append(grade(checkout, folder, Path(tmp) / side, args.jobs, f"{side}-{i}"))
                loads.append(os.getloadavg()[0])
    print(f"{args.copies} submissions (copies of {args.submissions}), --jobs {args.jobs}, load average "
          f"{min(loads):.1f} to {max(loads):.1f}\n")
    print("| round | before wall (s) | after wall (s) | before CPU (s) | after CPU (s) |\n|---|---|---|---|---|")
    for i, (b, a) in enumerate(zip(results["before"], results["after"]), 1):
        cpu = " | ".join("n/a" if c is None else f"{c:.1f}" for c in (b[1], a[1]))
        print(f"| {i} | {b[0]:.1f} | {a[0]:.1f} | {cpu} |")
    for kind, label in ((0, "wall"), (1, "CPU")):
        values = {side: [r[kind] for r in results[side]] for side in results}
        if None in values["before"] + values["after"]:
            continue
        before, after = (statistics.median(values[side]) for side in ("before", "after"))
        print(f"\nmedian {label}: before {before:.1f} s, after {after:.1f} s; after/before = {after / before:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
