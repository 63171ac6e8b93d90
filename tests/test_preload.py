"""Each exercise's `preload` says exactly which of torch's lazily imported modules (spec.LAZY_MODULES) its
trials need: a worker warmed for that exercise alone (a platform's container) loads those before its
snapshot and none of the others. Run as a worker runs it: a fresh process, the zygote's warm-up for no
exercise, then, in a process forked from it for each exercise (as the zygote forks each job, so each one
starts from the warm-up alone), the solution on every trial, public and hidden, with nothing of the grader's
reference (which runs in the grader, not the worker)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autograder.core.spec import LAZY_MODULES
from autograder.exercises import EXERCISES
from autograder.runner.worker import template as zygote
from tests.conftest import ROOT, solution_code

WORKER = r'''
import json, os, sys, traceback
import torch
torch.set_num_threads(1)
from autograder.exercises import get
from autograder.harness import run_answer
from autograder.public import load_public
from autograder.runner.worker.template import _warm_up
from autograder.core.spec import LAZY_MODULES
from autograder.trials import draw_hidden, plan

def loaded():
    return sorted(m for m in LAZY_MODULES if m in sys.modules)

def solve(exercise_id, code):
    exercise = get(exercise_id)
    trials = plan(exercise, ("cpu",), False)
    inputs = {**load_public(exercise)[1], **draw_hidden(exercise, trials, "preload-test")}
    report = run_answer(exercise, code, trials, inputs)
    errors = [o.error.message for o in report.outcomes.values() if o.error is not None]
    return {"after_warm_up": after_warm_up, "after_trials": loaded(), "load_error": str(report.load_error),
            "errors": errors}

_warm_up(())
after_warm_up = loaded()
found = {}
for exercise_id, code in json.loads(sys.stdin.read()).items():  # one job after another, each forked from here
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            text = json.dumps(solve(exercise_id, code))
        except BaseException:
            text = json.dumps({"crashed": traceback.format_exc()})
        with os.fdopen(write, "w") as out:
            out.write(text)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        found[exercise_id] = json.loads(answer.read())
    os.waitpid(pid, 0)
print(json.dumps(found))
'''


@pytest.fixture(scope="module")
def loaded_by_solutions() -> dict[str, dict]:
    solutions = {exercise_id: solution_code(exercise_id) for exercise_id in EXERCISES}
    done = subprocess.run([sys.executable, "-c", WORKER], input=json.dumps(solutions), capture_output=True,
                          text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    assert list(found) == list(EXERCISES) and not [f for f in found.values() if "crashed" in f], found
    return found


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
    probe = ("import sys; from autograder.runner.worker.template import _warm_up; "
             "from autograder.core.spec import LAZY_MODULES; "
             "_warm_up(tuple(sys.argv[1:])); print(sorted(m for m in LAZY_MODULES if m in sys.modules))")
    for ids, expected in ((("capstone",), sorted(EXERCISES["capstone"].preload)), (("data_trap",), [])):
        done = subprocess.run([sys.executable, "-c", probe, *ids], capture_output=True, text=True, cwd=ROOT,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.strip() == repr(expected), (ids, done.stdout)
    assert zygote._exercise_ids(["--drop-root", "--exercises", "a,b"]) == ("a", "b")
    assert zygote._exercise_ids(["--drop-root"]) is None
