"""The one door into student code (call.py): whatever a submission raises, a class of its own derived from
BaseException, SystemExit or KeyboardInterrupt included, at load time, in a trial or in backward while the
culprit locator runs the trial again, is recorded as its verdict and never escapes; only a stop that the
grader's own signal handler raised (Ctrl-C, a time limit) gets out, in process and through the sandbox."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from autograder.call import Call, Stop, stopping
from autograder.exercises import get
from autograder.feedback.text import feedback_text
from autograder.harness import load_answer, run_answer
from autograder.intake.cells import marker_line
from autograder.notebook.selfcheck import self_check
from autograder.pipeline import judge, run
from autograder.runner.limits import Limits
from autograder.runner.pool import WarmPool
from tests.conftest import prepared, solution_code
from tests.exercises.test_residual_add import BROKEN

ID = "residual_add"
RAISED = {  # the class a submission raises -> the code that defines it (if its own) and raises it
    "Sneaky": "class Sneaky(BaseException):\n    pass\n\n\ndef _raise(why):\n    raise Sneaky(why)\n",
    "KeyboardInterrupt": "def _raise(why):\n    raise KeyboardInterrupt(why)\n",
    "SystemExit": "def _raise(why):\n    raise SystemExit(why)\n",
}
UNDER_THE_LOCATOR = """
import sys


def _sneak(grad):
    frame = sys._getframe()
    while frame is not None:  # only when the grader's culprit locator runs the failing trial again
        if frame.f_code.co_name == "culprit_for":
            _raise("in backward, under the locator")
        frame = frame.f_back
    return grad


_forward = ResidualBlock.forward


def forward(self, x):
    out = _forward(self, x)
    out.register_hook(_sneak)
    return out


ResidualBlock.forward = forward
"""


def at_load(name: str) -> str:
    return RAISED[name] + '\n_raise("at load")\n'


def in_a_trial(name: str) -> str:
    return BROKEN + "\n" + RAISED[name] + '\nResidualBlock.forward = lambda self, x: _raise("in a trial")\n'


def under_the_locator(name: str) -> str:
    return BROKEN + "\n" + RAISED[name] + UNDER_THE_LOCATOR


def raising(error: BaseException):
    def fn():
        raise error

    return fn


def interrupt() -> None:
    """What Ctrl-C does: SIGINT to this process, whose handler raises at once."""
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)


# ---- the wrapper ---------------------------------------------------------------------------------------------


def test_a_call_keeps_the_value_and_the_time():
    call = Call.from_call(lambda a, b=0: time.sleep(0.01) or a + b, 2, b=3)
    assert (call.value, call.error) == (5, None) and call.seconds >= 0.01


class Sneaky(BaseException):
    pass


@pytest.mark.parametrize("error", [ValueError("v"), Sneaky("s"), SystemExit(3), KeyboardInterrupt(),
                                   Stop("raised by the code itself", timed_out=True), StopIteration(1)],
                         ids=lambda e: type(e).__name__)
def test_whatever_the_code_raises_is_recorded_even_while_stops_are_on(error):
    with stopping():
        call = Call.from_call(raising(error))
    assert call.error is error and call.value is None


def test_ctrl_c_under_stopping_gets_out_even_when_the_code_swallows_it():
    def swallows() -> str:
        try:
            interrupt()
        except BaseException:  # noqa: BLE001 - what a careless submission does
            pass
        return "carried on"

    for code in (interrupt, swallows):
        with pytest.raises(Stop, match="Ctrl-C") as stopped, stopping():
            Call.from_call(code)
        assert not stopped.value.timed_out
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


def test_the_time_limit_stops_the_code_and_is_put_away_after():
    start = time.perf_counter()
    with pytest.raises(Stop, match="out of time") as stopped, stopping(0.2):
        Call.from_call(time.sleep, 120)
    assert stopped.value.timed_out
    assert time.perf_counter() - start < 60  # stopped, not slept out: a bound that only catches the 120 s sleep
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_stopping_changes_nothing_off_the_main_thread():
    seen = []

    def worker():
        with stopping(0.01):
            seen.append(signal.getitimer(signal.ITIMER_REAL))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [(0.0, 0.0)]


# ---- in process, by the one grading path ---------------------------------------------------------------------


@pytest.mark.parametrize("name", list(RAISED))
def test_raised_at_load_is_the_verdict(grade, name):
    result = grade(ID, at_load(name))
    assert result.status == "failed" and result.score == 0
    assert f"raised {name}" in result.output and "at load" in result.output


@pytest.mark.parametrize("name", list(RAISED))
def test_raised_in_a_trial_is_that_trials_verdict(grade, name):
    result = grade(ID, in_a_trial(name))
    assert result.status == "failed" and result.score == 0
    forward = next(t for t in result.tests if t.name == "forward")
    assert f"raised {name}" in forward.output and "in a trial" in forward.output


@pytest.mark.parametrize("name", list(RAISED))
def test_raised_in_backward_under_the_locator_leaves_the_inplace_error_without_its_culprit(grade, name):
    made = prepared(ID)
    plain = run_answer(get(ID), BROKEN, made.trials, made.inputs)
    sneaky = run_answer(get(ID), under_the_locator(name), made.trials, made.inputs)
    assert plain.outcomes.keys() == sneaky.outcomes.keys()
    for key, outcome in sneaky.outcomes.items():
        assert outcome.error.type == "RuntimeError" and "modified by an inplace operation" in outcome.error.message
        assert plain.outcomes[key].error.culprit and outcome.error.culprit is None, key
    assert grade(ID, under_the_locator(name)).score == grade(ID, BROKEN).score


def test_an_exception_that_will_not_be_read_is_still_described():
    _, error = load_answer("class Odd(Exception):\n    def __str__(self):\n        raise Odd()\n\nraise Odd()\n")
    assert (error.type, error.message, error.line) == ("Odd", "(unreadable)", 5)
    _, error = load_answer("class Odd(Exception):\n    @property\n    def __traceback__(self):\n"
                           "        raise KeyboardInterrupt\n\nraise Odd('odd')\n")
    assert (error.type, error.message, error.line) == ("Odd", "odd", None)


def test_a_name_that_raises_when_looked_at_is_a_problem_not_an_escape(grade):
    code = ("class Meta(type):\n    def __getattribute__(cls, name):\n        if name == '__init__':\n"
            "            raise KeyboardInterrupt\n        return super().__getattribute__(name)\n\n"
            "class ResidualBlock(metaclass=Meta):\n    pass\n")
    result = grade(ID, code)
    assert result.score == 0 and "could not be inspected" in result.output and "KeyboardInterrupt" in result.output


# ---- the notebook's self-check ----------------------------------------------------------------------------------


def answer_cell(code: str) -> str:
    return marker_line(1, 1) + "\n" + code


def test_self_check_records_what_the_notebook_raises():
    result = self_check(ID, history=[answer_cell(in_a_trial("Sneaky"))], namespace={}).result
    assert result.score == 0 and "raised Sneaky" in feedback_text(result)


def test_ctrl_c_stops_the_self_check_with_a_line_that_says_so():
    namespace, error = load_answer(BROKEN)
    assert error is None
    namespace["ResidualBlock"].forward = lambda self, x: interrupt()
    found = self_check(ID, history=[], namespace=namespace)  # no answer cell run: it judges the notebook's names
    assert found.result is None and found.judged == "names"
    assert "Self-check stopped (interrupted (Ctrl-C)): no result." in found.notes


def test_a_self_check_that_loops_is_timed_out_as_the_grader_would():
    looping = BROKEN.replace("return out", "while True:\n            pass")
    found = self_check(ID, history=[answer_cell(looping)], namespace={}, timeout=1.0)
    assert found.result.status == "timed_out" and "loop forever" in found.result.output


# ---- through the sandboxed worker -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pool():
    with WarmPool(1, Limits(memory=1024**3)) as warm:
        yield warm


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RAISED))
def test_the_worker_records_it_too_and_the_next_job_is_graded_as_usual(pool, name):
    exercise, made = get(ID), prepared(ID)

    def graded(code: str):
        return judge(exercise, made, run(exercise, code, made, pool, timeout=20), answer=code)

    loaded, trial, locator = graded(at_load(name)), graded(in_a_trial(name)), graded(under_the_locator(name))
    assert loaded.status == "failed" and f"raised {name}" in loaded.output
    assert trial.status == "failed" and f"raised {name}" in next(t for t in trial.tests if t.name == "forward").output
    assert locator.status == "failed" and locator.score == graded(BROKEN).score
    honest = graded(solution_code(ID))
    assert honest.score == honest.max_score, honest.output
