"""One job's time in a warm, sandboxed worker, and the grader's judging of it, per exercise: the part of a
batch's throughput that grows with the number of submissions. Runs in whichever checkout it is run from
(and from earlier checkouts, whose Preparations.get returned a tuple), so that two checkouts can be compared:
run it with each one's python, from each one's folder, one after the other, and again in the other order.

Run: `.venv/bin/python benchmarks/warm_job.py [--repeat 20] [--exercises ID,ID]` (default: the five
exercises every checkout since the trust work grades alike). Prints the median job and judging time per
exercise, in ms.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = "residual_add,inplace_dropout,sliced_input,rnn_hidden,custom_inplace"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--exercises", default=SHARED)
    args = p.parse_args()
    import torch

    from autograder.batch import Preparations, Settings
    from autograder.exercises import get
    from autograder.grade import grade
    from autograder.runner import Job
    from autograder.runner.limits import Limits
    from autograder.runner.pool import WarmPool
    from autograder.submission import answer_code

    torch.set_num_threads(1)
    references = Preparations(Settings())
    jobs = {}
    for exercise_id in args.exercises.split(","):
        exercise = get(exercise_id)
        (notebook,) = (ROOT / "solutions").glob(f"*_{exercise_id}.ipynb")
        code = answer_code(notebook).code
        made = references.get(exercise)
        if isinstance(made, tuple):  # checkouts before the one grading path
            trials, inputs, reference = made
            hidden = frozenset(k for k in inputs if not exercise.scenario(k.split("/")[0]).public)
        else:
            trials, inputs, reference, hidden = made.trials, made.inputs, made.reference, made.hidden
        jobs[exercise_id] = (exercise, Job(exercise_id, code, trials, inputs, 60, hidden=hidden), reference, code)
    print(f"{ROOT.name}: median of {args.repeat} jobs each, one warm worker\n")
    print("| exercise | job (ms) | judging (ms) |\n|---|---|---|")
    with WarmPool(1, Limits(memory=2 * 1024**3)) as pool:
        for exercise_id, (exercise, job, reference, code) in jobs.items():
            run, judged = [], []
            for _ in range(args.repeat):
                start = time.perf_counter()
                report = pool.run(job)
                run.append(time.perf_counter() - start)
                start = time.perf_counter()
                result = grade(exercise, report, reference, job.trials, job.inputs, submission="x", answer=code)
                judged.append(time.perf_counter() - start)
            assert result.score == result.max_score, (exercise_id, result.output)
            print(f"| {exercise_id} | {statistics.median(run) * 1000:.1f} | {statistics.median(judged) * 1000:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
