"""One job's time in a warm, sandboxed worker, and the grader's judging of it, per exercise: the part of a
batch's throughput that grows with the number of submissions.

Run: `.venv/bin/python benchmarks/warm_job.py [--before PATH] [--rounds 3] [--repeat 20] [--exercises ID,ID]`.
Alone, it measures this checkout: the median job and judging time per exercise, in ms. With `--before` (a
checkout of an earlier commit, with its own .venv made by its scripts/install), it measures both in one run,
side by side: each round starts a fresh worker in each checkout, the two in turn (the order swapped every
round, so the machine's load falls on both alike), and it prints the median over rounds and the ratio
after/before. The measuring is this file run by each checkout's python in that checkout's folder, so it
copes with earlier checkouts (whose References.get returned a tuple). Default exercises: the five every
checkout since the trust work grades alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = "residual_add,inplace_dropout,sliced_input,rnn_hidden,custom_inplace"


def measure(exercises: list[str], repeat: int) -> dict[str, tuple[float, float]]:
    """In this process's checkout: per exercise, the median job and judging times in ms."""
    import torch

    from autograder.batch import References, Settings
    from autograder.exercises import get
    from autograder.grade import grade
    from autograder.runner import Job
    from autograder.runner.limits import Limits
    from autograder.runner.pool import WarmPool
    from autograder.submission import answer_code

    torch.set_num_threads(1)
    references = References(Settings())
    jobs = {}
    for exercise_id in exercises:
        exercise = get(exercise_id)
        (notebook,) = (Path.cwd() / "solutions").glob(f"*_{exercise_id}.ipynb")
        code = answer_code(notebook).code
        made = references.get(exercise)
        if isinstance(made, tuple):  # checkouts before the one grading path
            trials, inputs, reference = made
            hidden = frozenset(k for k in inputs if not exercise.scenario(k.split("/")[0]).public)
        else:
            trials, inputs, reference, hidden = made.trials, made.inputs, made.reference, made.hidden
        jobs[exercise_id] = (exercise, Job(exercise_id, code, trials, inputs, 60, hidden=hidden), reference, code)
    medians = {}
    with WarmPool(1, Limits(memory=2 * 1024**3)) as pool:
        for exercise_id, (exercise, job, reference, code) in jobs.items():
            run, judged = [], []
            for _ in range(repeat):
                start = time.perf_counter()
                report = pool.run(job)
                run.append(time.perf_counter() - start)
                start = time.perf_counter()
                result = grade(exercise, report, reference, job.trials, job.inputs, submission="x", answer=code)
                judged.append(time.perf_counter() - start)
            assert result.score == result.max_score, (exercise_id, result.output)
            medians[exercise_id] = (statistics.median(run) * 1000, statistics.median(judged) * 1000)
    return medians


def _round(checkout: Path, exercises: list[str], repeat: int) -> dict[str, tuple[float, float]]:
    """One round in `checkout`: this file, run there by its own python, in a process of its own."""
    command = [str(checkout / ".venv" / "bin" / "python"), str(Path(__file__).resolve()), "--json",
               "--repeat", str(repeat), "--exercises", ",".join(exercises)]
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: {done.stderr[-2000:]}")
    return {k: tuple(v) for k, v in json.loads(done.stdout.splitlines()[-1]).items()}


def compare(before: Path, exercises: list[str], rounds: int, repeat: int) -> None:
    times: dict[str, list[dict]] = {"before": [], "after": []}
    sides = [("before", before.resolve()), ("after", ROOT)]
    for i in range(rounds):
        for side, checkout in sides if i % 2 == 0 else sides[::-1]:
            times[side].append(_round(checkout, exercises, repeat))
    print(f"{rounds} rounds of {repeat} jobs per exercise, one warm worker each, load average "
          f"{os.getloadavg()[0]:.1f}\n")
    print("| exercise | job before (ms) | job after (ms) | after/before | judging before (ms) | judging after (ms) |")
    print("|---|---|---|---|---|---|")
    total = {"before": 0.0, "after": 0.0}
    for exercise in exercises:
        job = {side: statistics.median(r[exercise][0] for r in times[side]) for side in times}
        judging = {side: statistics.median(r[exercise][1] for r in times[side]) for side in times}
        for side in total:
            total[side] += job[side]
        print(f"| {exercise} | {job['before']:.1f} | {job['after']:.1f} | {job['after'] / job['before']:.3f} | "
              f"{judging['before']:.1f} | {judging['after']:.1f} |")
    print(f"\nsum of the jobs' medians: before {total['before']:.0f} ms, after {total['after']:.0f} ms; "
          f"after/before = {total['after'] / total['before']:.3f}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", type=Path, help="an earlier checkout, with its own .venv, to compare with")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--exercises", default=SHARED)
    p.add_argument("--json", action="store_true", help="(internal) one round, as JSON")
    args = p.parse_args()
    exercises = args.exercises.split(",")
    if args.json:
        print(json.dumps(measure(exercises, args.repeat)))
        return 0
    if args.before is not None:
        compare(args.before, exercises, args.rounds, args.repeat)
        return 0
    os.chdir(ROOT)
    print(f"{ROOT.name}: median of {args.repeat} jobs each, one warm worker\n")
    print("| exercise | job (ms) | judging (ms) |\n|---|---|---|")
    for exercise, (job, judging) in measure(exercises, args.repeat).items():
        print(f"| {exercise} | {job:.1f} | {judging:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
