"""Runs an exercise's scenarios against a namespace: the student's (in a worker, or a notebook's in the
self-check) or the reference's. Every call into that code goes through the one door, call.Call, so
whatever it raises becomes an ErrorInfo here and nothing escapes.

Everything it returns has been turned into plain values here, on the side that ran the code.
"""

from __future__ import annotations

import ast
import linecache
import math
import sys
import time
import traceback
import types
from collections.abc import Callable, Generator, Mapping
from dataclasses import replace
from typing import Any

import torch

from . import torch_state
from .call import Call
from .core.messages import INPLACE_ERROR
from .core.outcome import ANSWER_FILE, ErrorInfo, Outcome, RunReport, Trial
from .core.spec import Exercise, Inputs
from .feedback.wording import say
from .intake.cells import CELL_BREAK, cell_magic, may_be_ipython, python_of_cell

_seed = torch.random.manual_seed
"""Seeds each trial. Bound here, before any answer runs, and not torch.manual_seed: once torch has imported
dynamo (an optimizer's first step does), that is a wrapper whose cached target lives on the function as a
plain attribute, which answer code could set."""


def guarded_namespaces() -> dict[str, Any]:
    """Namespaces whose functions the harness relies on, by name: torch, Tensor, autograd, functional..."""
    import torch.nn.functional as functional

    return {"torch": torch, "torch.Tensor": torch.Tensor, "torch.autograd": torch.autograd,
            "torch.nn.functional": functional, "torch.nn.Module": torch.nn.Module,
            "torch.autograd.Function": torch.autograd.Function, "torch.testing": torch.testing}


ANSWER_MODULE = "__answer__"
"""The answer's module name: it is in sys.modules while the answer runs (a `@dataclass` looks its module up)."""


def load_answer(code: str, filename: str = ANSWER_FILE) -> tuple[dict[str, Any], ErrorInfo | None]:
    """Executes answer code in a fresh module, cell by cell as Jupyter does (cells.CELL_BREAK), with the
    names a notebook has that Python lacks (`display`, `get_ipython`); returns its namespace and the error that
    stopped it, if any. A cell that is not Python but may be IPython's own syntax (a magic, `!shell`, `name?`)
    is read as IPython reads it (cells.python_of_cell), here, where the answer runs: in a worker, inside the
    sandbox and under the job's time limit. A syntax error is located at its line of the whole answer."""
    module = types.ModuleType(ANSWER_MODULE)
    namespace: dict[str, Any] = module.__dict__
    namespace.update(__file__="answer.py", display=_display, get_ipython=lambda: _Notebook(namespace))
    sys.modules[ANSWER_MODULE] = module
    cells = [(first_line, *_as_python(cell, filename, first_line)) for first_line, cell in _cells(code)]
    shown = f"\n{CELL_BREAK}\n".join(text for _, _, text in cells)
    linecache.cache[filename] = (len(shown), None, shown.splitlines(keepends=True), filename)
    for first_line, compiled, _ in cells:
        if isinstance(compiled.error, SyntaxError):  # Python's own, about the answer's text: its line, as written
            e = compiled.error
            line = e.lineno + first_line - 1 if e.lineno is not None else None
            return namespace, ErrorInfo("SyntaxError", str(e.msg), line, e.text.rstrip("\n") if e.text else None)
        ran = compiled if compiled.error is not None else Call.from_call(exec, compiled.value, namespace)
        if ran.error is not None:
            return namespace, error_info(ran.error, filename)
    return namespace, None


def _as_python(cell: str, filename: str, first_line: int) -> tuple[Call, str]:
    """A cell compiled (a Call: its code object, or the error compiling it raised), and its text as tracebacks
    and the locator read it: the cell itself, or, where it was read as IPython's syntax, the Python it became
    (a cell magic that runs Python, e.g. `%%capture`, shows its body, each line where it was written)."""
    compiled = Call.from_call(_compile, cell, filename, first_line)
    if not isinstance(compiled.error, SyntaxError) or not may_be_ipython(cell):
        return compiled, cell
    python, magic = python_of_cell(cell), cell_magic(cell)
    shown = python
    if magic is not None and magic[0] in _Notebook.RUN_CELL:
        above = cell.count("\n") - magic[2].count("\n") - 1  # the blank lines above the magic's line
        shown = "\n" * above + f"# %%{magic[0]} {magic[1]}\n" + python_of_cell(magic[2])
    return Call.from_call(_compile, python, filename, first_line), shown


def _cells(code: str) -> list[tuple[int, str]]:
    """The answer's cells, each with the number of its first line in the whole answer."""
    cells, start, lines = [], 1, code.split("\n")
    current: list[str] = []
    for number, line in enumerate(lines, 1):
        if line == CELL_BREAK:
            cells.append((start, "\n".join(current)))
            start, current = number + 1, []
        else:
            current.append(line)
    cells.append((start, "\n".join(current)))
    return cells


def _compile(cell: str, filename: str, first_line: int) -> Any:
    tree = ast.parse(cell, filename)
    ast.increment_lineno(tree, first_line - 1)
    return compile(tree, filename, "exec")


def _display(*objects: Any, **options: Any) -> None:
    """Jupyter's display(): grading shows nothing."""


class _Notebook:
    """What `get_ipython()` gives an answer while it is graded: the calls IPython makes of a notebook's own
    syntax (cells.python_of_cell). The magics that run Python in the notebook's namespace run it, once, with
    their options read as IPython reads them (`%timeit -n 3 -r 1 f(x)` runs `f(x)`): the line magics `%time`,
    `%timeit` and `%prun`, and the cell magics `%%time`, `%%timeit` (its line is the setup, run first),
    `%%prun` and `%%capture` (what the cell prints is captured, as IPython does, and bound to the name its
    line gives). Every other magic and shell escape does nothing (a `!pip install`, a `%matplotlib inline`, a
    `%%writefile`)."""

    RUN = ("time", "timeit", "prun")
    RUN_CELL = ("time", "timeit", "prun", "capture")

    def __init__(self, namespace: dict[str, Any]):
        self._namespace = namespace

    def run_line_magic(self, name: str, line: str, *args: Any, **kwargs: Any) -> Any:
        if name not in self.RUN:
            return None
        statement = _magic_statement(name, line)
        if not statement.strip():
            return None
        first_line = _caller_line()
        try:  # `%time` gives the value of an expression, as IPython's does
            expression = _compile_as(statement, first_line, "eval")
        except SyntaxError:
            exec(_compile_as(statement, first_line, "exec"), self._namespace)
            return None
        value = eval(expression, self._namespace)
        return value if name == "time" else None

    def run_cell_magic(self, name: str, line: str, cell: str, *args: Any, **kwargs: Any) -> None:
        if name not in self.RUN_CELL:
            return
        first_line = _caller_line() + 1  # the body starts on the line below the magic's
        if name == "capture":
            from IPython.core import magic_arguments
            from IPython.core.magics.execution import ExecutionMagics
            from IPython.utils.capture import capture_output

            options = magic_arguments.parse_argstring(ExecutionMagics.capture, line)
            with capture_output(not options.no_stdout, not options.no_stderr, not options.no_display) as captured:
                self._run(cell, first_line)
            if options.output:
                self._namespace[options.output] = captured
            return
        setup = _magic_statement(name, line)
        if name == "timeit" and setup.strip():
            exec(_compile_as(setup, first_line - 1, "exec"), self._namespace)
        if name == "prun" and setup.strip():  # %%prun runs its line, then the cell
            self._run(setup + "\n" + cell, first_line - 1)
        else:
            self._run(cell, first_line)

    def _run(self, cell: str, first_line: int) -> None:
        exec(_compile_as(python_of_cell(cell), first_line, "exec"), self._namespace)

    def system(self, *args: Any, **kwargs: Any) -> None:
        pass

    getoutput = system


def _magic_statement(name: str, line: str) -> str:
    """The Python a line of `%time`, `%timeit` or `%prun` runs: its options taken off by IPython's own parsers
    (the option strings are those of IPython's ExecutionMagics)."""
    if not line.strip() or not line.lstrip().startswith("-"):
        return line  # no option: nothing to take off (and no need to import IPython)
    from IPython.core import magic_arguments
    from IPython.core.magics.execution import ExecutionMagics

    if name == "time":
        _, rest = magic_arguments.parse_argstring(ExecutionMagics.time, line, partial=True)
        return " ".join(rest)
    magics = ExecutionMagics(shell=None)
    if name == "timeit":
        _, statement = magics.parse_options(line, "n:r:tcp:qov:", posix=False, strict=False, preserve_non_opts=True)
    else:
        _, statement = magics.parse_options(line, "D:l:rs:T:q", list_all=True, posix=False)
    return str(statement)


def _caller_line() -> int:
    """The line of the answer that called the stand-in (where its magic was written); 1 where it is not known."""
    frame = sys._getframe(2)
    return frame.f_lineno if frame.f_code.co_filename == ANSWER_FILE and frame.f_lineno else 1


def _compile_as(code: str, first_line: int, mode: str) -> Any:
    tree: Any = ast.parse(code, ANSWER_FILE, mode)
    ast.increment_lineno(tree, first_line - 1)
    return compile(tree, ANSWER_FILE, mode)


def error_info(exc: BaseException, filename: str = ANSWER_FILE) -> ErrorInfo:
    """The exception as plain data, located at the innermost frame of the answer code. All of it may be the
    code's own doing (a `__str__` that raises, a `__traceback__` property): each part read through a Call."""
    located = Call.from_call(_location, exc, filename)
    line, code = located.value if located.error is None else (None, None)
    message = _text(lambda: say("run: called exit", code=exc.code) if isinstance(exc, SystemExit) else str(exc))
    return ErrorInfo(_text(lambda: type(exc).__name__), message[:4000], line, code)


def _location(exc: BaseException, filename: str) -> tuple[int | None, str | None]:
    """The line number and text of the innermost frame of `filename` in the exception's traceback."""
    line = code = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line, code = frame.lineno, frame.line
    return line, code


def _text(read: Callable[[], object]) -> str:
    """A string that code under test provides, as a plain str; a stand-in where it gives none."""
    call = Call.from_call(read)
    return str.__str__(call.value) if isinstance(call.value, str) else "(unreadable)"


def symbol_problems(exercise: Exercise, namespace: Mapping[str, Any]) -> dict[str, str]:
    """What is wrong with each name the exercise needs; empty when all are usable."""
    problems = {}
    for symbol in exercise.defines:
        if symbol.name not in namespace:
            problems[symbol.name] = say("run: not defined", symbol=symbol.name)
        else:  # looking at a class or a function can run its code (a metaclass, a __signature__)
            looked = Call.from_call(symbol.problem_with, namespace[symbol.name])
            if looked.error is not None:
                problems[symbol.name] = say("run: not inspectable", symbol=symbol.name,
                                            type=error_info(looked.error).type)
            elif looked.value:
                problems[symbol.name] = looked.value
    return problems


def to_device(inputs: Inputs, device: torch.device) -> Inputs:
    """A fresh copy of the inputs on `device`, so that no trial sees another trial's changes."""
    return {k: v.detach().clone().to(device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}


def plain(value: Any) -> Any:
    """A value a scenario observed, as a plain CPU tensor, float, int, bool or str."""
    if isinstance(value, torch.Tensor):
        t = torch.Tensor.as_subclass(value, torch.Tensor).detach()
        return t.to("cpu", copy=True).contiguous()
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else float("nan")
    if isinstance(value, str):
        return str(value)[:2000]
    raise TypeError(f"a scenario may observe tensors, numbers and strings, not {type(value).__name__}")


def _with_culprit(error: ErrorInfo, rerun: Callable[[], None], frames: str | None) -> ErrorInfo:
    """For an in-place error: run the trial again under the locator to name the line that did it. The
    locator is a bonus: where the re-run raises something else, the error stands without it."""
    from .blame import culprit_for

    located = Call.from_call(culprit_for, rerun, frames)
    return replace(error, culprit=located.value) if located.value else error


def run_trial(exercise: Exercise, namespace: Mapping[str, Any], trial: Trial, inputs: Mapping[str, Inputs],
              seed: int, filename: str = ANSWER_FILE, culprit_frames: str | None = ANSWER_FILE,
              baseline: torch_state.Snapshot | None = None) -> Outcome:
    """Runs one trial, keeping what it observed even when it raised. An in-place error is run again under
    the culprit locator, whose report names the line (frames of `culprit_frames`; None: any frame outside
    torch and this package). `seed` seeds torch: stochastic code is seeded, but no check depends on the
    stream. Torch's global state (torch_state: modes, grad mode, default dtype, hooks...) must be
    `baseline`'s (by default, what it is when the trial starts) when the trial ends: where the code left it
    changed, what the trial observed was observed under the code's state, so the trial observed nothing and
    failed (GLOBAL_STATE_ERROR), and the state is put back."""
    baseline = torch_state.capture() if baseline is None else baseline
    scenario = exercise.scenario(trial.scenario)
    device = torch.device(trial.device)
    values = inputs[trial.input_key]

    def attempt(obs: dict[str, Any]) -> None:
        _seed(seed)
        scenario.run(namespace, to_device(values, device), device, obs)

    obs: dict[str, Any] = {}
    ran = Call.from_call(attempt, obs)
    left = _state_left(baseline)
    if left is not None:
        return Outcome({}, left)
    kept = Call.from_call(lambda: {k: plain(v) for k, v in obs.items()})  # the values may be the code's own types
    error = ran.error if ran.error is not None else kept.error
    info = None if error is None else error_info(error, filename)
    if info is not None and INPLACE_ERROR.search(info.message):
        info = _with_culprit(info, lambda: attempt({}), culprit_frames)
        info = _state_left(baseline) or info
    return Outcome(kept.value or {}, info)


# The type of the error of a step that left torch's global state changed (torch_state.STATES).
GLOBAL_STATE_ERROR = "GlobalStateError"


def _state_left(baseline: torch_state.Snapshot) -> ErrorInfo | None:
    """None where torch's global state is `baseline`'s; else the error that says which rows it left
    changed, once they are put back (those that can be)."""
    left = torch_state.differing(baseline)
    if not left:
        return None
    torch_state.restore(baseline)
    return ErrorInfo(GLOBAL_STATE_ERROR, say("run: global state left", states=", ".join(left)), None, None)


def run_trials(exercise: Exercise, namespace: Mapping[str, Any], trials: tuple[Trial, ...],
               inputs: Mapping[str, Inputs], filename: str = ANSWER_FILE,
               culprit_frames: str | None = ANSWER_FILE) -> dict[str, Outcome]:
    """Every trial in order (run_trial), by trial key."""
    return {t.key: run_trial(exercise, namespace, t, inputs, 1000 + i, filename, culprit_frames)
            for i, t in enumerate(trials)}


Steps = Generator["RunReport | None", "Mapping[str, Inputs] | None", RunReport]
"""A run, one step at a time: see answer_steps."""


def answer_steps(exercise: Exercise, code: str, first: tuple[Trial, ...], then: tuple[Trial, ...],
                 inputs: Mapping[str, Inputs]) -> Steps:
    """Loads answer code and runs its trials, one step at a time: loading, then each trial (the first one
    looks at the names the exercise needs before it runs). Whoever drives it may look between the steps:
    the worker's guard compares torch and the grader with its snapshot after each. Yields None after a
    step. With trials `then` (on hidden inputs), yields the report of the trials `first` once they have
    run, and takes the hidden inputs in return; returns the report of the trials run since (of all of
    them, without `then`). Torch's global state is captured first: what loading leaves changed is put back
    before the trials (a notebook's cell may set a default dtype, or turn gradients off, for its own
    experiments); what cannot be put back fails the load; each trial must leave it as it found it."""
    baseline = torch_state.capture()
    namespace, load_error = load_answer(code)
    left = torch_state.restore(baseline)
    yield None
    if load_error is not None:
        return RunReport(load_error=load_error)
    if left:
        return RunReport(load_error=ErrorInfo(GLOBAL_STATE_ERROR, say("run: global state left",
                                                                      states=", ".join(left)), None, None))
    return (yield from trial_steps(exercise, namespace, first, then, inputs, baseline=baseline))


def trial_steps(exercise: Exercise, namespace: Mapping[str, Any], first: tuple[Trial, ...],
                then: tuple[Trial, ...], inputs: Mapping[str, Inputs], filename: str = ANSWER_FILE,
                culprit_frames: str | None = ANSWER_FILE, baseline: torch_state.Snapshot | None = None) -> Steps:
    """The trials of answer_steps, on names already defined, each a step (run_trial); the run stops where
    a name the exercise needs is missing or unusable. `baseline`: torch's global state each trial must
    leave as it found (by default, the state when this starts)."""
    baseline = torch_state.capture() if baseline is None else baseline
    problems = symbol_problems(exercise, namespace)
    if problems:
        return RunReport(problems=problems)
    outcomes = {}
    for i, trial in enumerate(first):
        outcomes[trial.key] = run_trial(exercise, namespace, trial, inputs, 1000 + i, filename, culprit_frames,
                                        baseline)
        yield None
    report = RunReport(outcomes=outcomes)
    if not then:
        return report
    hidden = yield report
    outcomes, inputs = {}, {**inputs, **(hidden or {})}
    for i, trial in enumerate(then, start=len(first)):
        outcomes[trial.key] = run_trial(exercise, namespace, trial, inputs, 1000 + i, filename, culprit_frames,
                                        baseline)
        yield None
    return RunReport(outcomes=outcomes)


def run_steps(steps: Steps) -> RunReport:
    """Every step, with nothing looked at between them: in this process, for trusted code (a test's, a
    student's own self-check), timed."""
    start = time.perf_counter()
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return replace(done.value, seconds=time.perf_counter() - start)


def run_answer(exercise: Exercise, code: str, trials: tuple[Trial, ...], inputs: Mapping[str, Inputs]) -> RunReport:
    """Loads answer code and runs every trial, in order, in this process."""
    return run_steps(answer_steps(exercise, code, trials, (), inputs))
