"""Each exercise's `preload` says exactly which of torch's lazily imported modules (spec.LAZY_MODULES) its
trials need: a worker warmed for that exercise alone (a platform's container) loads those before its
snapshot and none of the others. Run as a worker runs it: a fresh process, the zygote's warm-up for no
exercise, then the solution on every trial, public and hidden, with nothing of the grader's reference
(which runs in the grader, not the worker)."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from autograder.exercises import EXERCISES
from autograder.runner import zygote
from autograder.spec import LAZY_MODULES
from tests.conftest import ROOT, solution_code

WORKER = r'''
import json, sys
import torch
torch.set_num_threads(1)
from autograder.exercises import get
from autograder.harness import run_answer
from autograder.public import load_public
from autograder.runner.zygote import _warm_up
from autograder.spec import LAZY_MODULES
from autograder.trials import draw_hidden, plan

def loaded():
    return sorted(m for m in LAZY_MODULES if m in sys.modules)

_warm_up(())
after_warm_up = loaded()
exercise = get(sys.argv[1])
trials = plan(exercise, ("cpu",), False)
inputs = {**load_public(exercise)[1], **draw_hidden(exercise, trials, "preload-test")}
report = run_answer(exercise, sys.stdin.read(), trials, inputs)
errors = [o.error.message for o in report.outcomes.values() if o.error is not None]
print(json.dumps({"after_warm_up": after_warm_up, "after_trials": loaded(), "load_error": str(report.load_error),
                  "errors": errors}))
'''


@pytest.fixture(scope="module")
def loaded_by_solutions() -> dict[str, dict]:
    def run(exercise_id: str) -> dict:
        done = subprocess.run([sys.executable, "-c", WORKER, exercise_id], input=solution_code(exercise_id),
                              capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout)

    with ThreadPoolExecutor(2) as threads:
        return dict(zip(EXERCISES, threads.map(run, EXERCISES)))


def test_the_warm_up_for_no_exercise_loads_none_of_them(loaded_by_solutions):
    assert all(found["after_warm_up"] == [] for found in loaded_by_solutions.values()), loaded_by_solutions


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_preload_is_what_the_solution_loads(loaded_by_solutions, exercise_id):
    found = loaded_by_solutions[exercise_id]
    assert found["load_error"] == "None" and found["errors"] == [], found  # the solution ran every trial
    assert found["after_trials"] == sorted(EXERCISES[exercise_id].preload), (
        f"{exercise_id}: its solution's trials load {found['after_trials']}; its preload says "
        f"{sorted(EXERCISES[exercise_id].preload)}")


def test_a_preloaded_worker_loads_exactly_what_its_exercises_need():
    """The zygote's warm-up for the optimizer exercises loads dynamo; for one that needs nothing, nothing."""
    assert set(LAZY_MODULES) >= {m for e in EXERCISES.values() for m in e.preload}
    probe = ("import sys; from autograder.runner.zygote import _warm_up; from autograder.spec import LAZY_MODULES; "
             "_warm_up(tuple(sys.argv[1:])); print(sorted(m for m in LAZY_MODULES if m in sys.modules))")
    for ids, expected in ((("capstone",), sorted(EXERCISES["capstone"].preload)), (("data_trap",), [])):
        done = subprocess.run([sys.executable, "-c", probe, *ids], capture_output=True, text=True, cwd=ROOT,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.strip() == repr(expected), (ids, done.stdout)
    assert zygote._exercise_ids(["--drop-root", "--exercises", "a,b"]) == ("a", "b")
    assert zygote._exercise_ids(["--drop-root"]) is None
