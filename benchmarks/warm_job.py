"""One job's time in a warm, sandboxed worker, and the grader's judging of it, per exercise: the part of a
batch's throughput that grows with the number of submissions.

Run: `.venv/bin/python benchmarks/warm_job.py [--before PATH] [--rounds 3] [--repeat 20] [--exercises ID,ID]`.
Alone, it measures this checkout: the median job and judging time per exercise, in ms, and, where it may
make a cpuacct cgroup (as root, cgroup v1: cputime.py), the median CPU time a job costs, the worker's
processes and the job's together (on a machine shared with other work, the steadier of the two). With `--before` (a
checkout of an earlier commit, with its own .venv made by its scripts/install), it measures both in one run,
side by side: each round starts a fresh worker in each checkout, the two in turn (the order swapped every
round, so the machine's load falls on both alike), and it prints the median over rounds and the ratio
after/before. The measuring is this file run by each checkout's python in that checkout's folder, so it
copes with earlier checkouts (whose Preparations.get, once References.get, returned a tuple). Default
exercises: the five every checkout since the trust work grades alike.
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


def measure(exercises: list[str], repeat: int) -> dict[str, tuple[float, float, float | None]]:
    """In this process's checkout: per exercise, the median job, judging and job CPU times in ms (CPU: None
    where no cpuacct group can be made)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from cputime import CpuGroup

    group = CpuGroup.make("warm-job")
    if group is not None:
        group.enter()  # the workers started from here on are counted with this process
    try:
        return _measure(exercises, repeat, group)
    finally:
        if group is not None:
            group.close()


def _measure(exercises: list[str], repeat: int, group) -> dict[str, tuple[float, float, float | None]]:
    import torch

    from autograder.batch import Preparations, Settings
    from autograder.core.grade import grade
    from autograder.exercises import get
    from autograder.intake.submission import answer_code
    from autograder.runner import Job
    from autograder.runner.limits import Limits
    from autograder.runner.pool import WarmPool

    torch.set_num_threads(1)
    references = Preparations(Settings())
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
            run, judged, cpu = [], [], []
            for _ in range(repeat):
                spent = group.seconds() if group is not None else 0.0
                start = time.perf_counter()
                report = pool.run(job)
                run.append(time.perf_counter() - start)
                cpu.append((group.seconds() - spent) if group is not None else None)
                start = time.perf_counter()
                result = grade(exercise, report, reference, job.trials, job.inputs, submission="x", answer=code)
                judged.append(time.perf_counter() - start)
            assert result.score == result.max_score, (exercise_id, result.output)
            medians[exercise_id] = (statistics.median(run) * 1000, statistics.median(judged) * 1000,
                                    statistics.median(cpu) * 1000 if group is not None else None)
    return medians


def _round(checkout: Path, exercises: list[str], repeat: int) -> dict[str, tuple[float, float, float | None]]:
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
    print("| exercise | job before (ms) | job after (ms) | after/before | job CPU before (ms) | job CPU after (ms) "
          "| after/before | judging before (ms) | judging after (ms) |")
    print("|---|---|---|---|---|---|---|---|---|")
    total = {(kind, side): 0.0 for kind in (0, 2) for side in times}
    for exercise in exercises:
        median = {(kind, side): statistics.median(r[exercise][kind] or 0.0 for r in times[side])
                  for kind in (0, 1, 2) for side in times}
        for key in total:
            total[key] += median[key]
        cells = [f"{median[kind, 'before']:.1f} | {median[kind, 'after']:.1f}" for kind in (0, 2, 1)]
        ratios = [_ratio(median[kind, "after"], median[kind, "before"]) for kind in (0, 2)]
        print(f"| {exercise} | {cells[0]} | {ratios[0]} | {cells[1]} | {ratios[1]} | {cells[2]} |")
    for kind, label in ((0, "wall"), (2, "CPU")):
        print(f"\nsum of the jobs' medians ({label}): before {total[kind, 'before']:.0f} ms, after "
              f"{total[kind, 'after']:.0f} ms; after/before = {_ratio(total[kind, 'after'], total[kind, 'before'])}")


def _ratio(after: float, before: float) -> str:
    return f"{after / before:.3f}" if before else "n/a"


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
    print("| exercise | job (ms) | job CPU (ms) | judging (ms) |\n|---|---|---|---|")
    for exercise, (job, judging, cpu) in measure(exercises, args.repeat).items():
        print(f"| {exercise} | {job:.1f} | {'n/a' if cpu is None else f'{cpu:.1f}'} | {judging:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
