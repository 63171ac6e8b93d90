"""`check("residual_add")` inside a notebook: the public checks, on what the grader will grade.

The grader runs the notebook's answer cells on their own (submission.py). So does check(): it takes the text
each answer cell had when the learner last ran it (the kernel's input history; every answer cell's first line
says it is one, cells.ANSWER_MARKER) and runs that, in a fresh module, on the public inputs, with the grader's
own judge. What the kernel defined elsewhere (a helper in another cell, an import, an old definition) is not
seen, as the grader will not see it, and check() says so before its verdict. Where it finds no answer cell
among the cells run (a notebook whose marker line was deleted), it judges the names the notebook defined, and
says that the grader may judge otherwise.

It runs in the student's own kernel, on public inputs only, with a time limit; it never enters a grade, and
needs no reference implementation: the public inputs and the reference's outcomes on them ship with the
package (public.py). It prints its feedback and returns nothing (a notebook would print a returned value).
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..call import Stop, stopping
from ..core.outcome import RunReport
from ..core.result import Result
from ..core.spec import Exercise
from ..core.status import Status
from ..exercises import get
from ..feedback.text import feedback_text, footer
from ..feedback.wording import say
from ..harness import answer_steps, run_steps, trial_steps
from ..intake.cells import last_run_answers, notebook_code
from ..pipeline import Prepared, judge, prepare

TIME_LIMIT = 30.0
"""Seconds a check may take before it stops the code (every exercise's takes under a second): a loop that never
ends is reported as timed out, as the grader would."""

@dataclass(frozen=True)
class SelfCheck:
    """What one check judged and found."""

    result: Result | None
    """None where the learner stopped it (Ctrl-C)."""
    report: RunReport | None
    notes: tuple[str, ...]
    """What the learner must know before the verdict: where check() and the grader may differ."""
    judged: str
    """"answer cells" (as the grader will), or "names" (the notebook's, where no answer cell was found)."""
    stop: Stop | None = None
    """What stopped it with no result (Ctrl-C)."""


def self_check(exercise_id: str, *, history: list[str] | None = None, namespace: Mapping[str, Any] | None = None,
               timeout: float | None = TIME_LIMIT) -> SelfCheck:
    """The public checks on the answer cells as last run (from `history`, the kernel's raw inputs; default: this
    kernel's), else on `namespace` (default: the notebook's)."""
    exercise = get(exercise_id)
    prepared = prepare(exercise, public_only=True)
    shell = _shell()
    if history is None:
        history = list(shell.history_manager.input_hist_raw) if shell is not None else []
    if namespace is None:
        namespace = shell.user_ns if shell is not None else vars(sys.modules["__main__"])
    answers = last_run_answers(history)
    if not answers:
        notes: tuple[str, ...] = (say("notebook: no answer cell"),)
        steps = trial_steps(exercise, namespace, prepared.trials, (), prepared.inputs, filename="<notebook>",
                            culprit_frames=None)
        return _judged(exercise, prepared, steps, None, notes, "names", timeout)
    notes = tuple(say("notebook: answer cell not run", number=n)
                  for n in range(1, max(answers) + 1) if n not in answers)
    code = notebook_code([answers[n] for n in sorted(answers)])
    notes += tuple(say("notebook: defined outside", symbol=name) for name in outside_names(code, namespace))
    steps = answer_steps(exercise, code, prepared.trials, (), prepared.inputs)
    return _judged(exercise, prepared, steps, code, notes, "answer cells", timeout)


def _judged(exercise: Exercise, prepared: Prepared, steps: Any, code: str | None, notes: tuple[str, ...],
            judged: str, timeout: float | None) -> SelfCheck:
    try:
        with stopping(timeout):
            report = run_steps(steps)
    except Stop as stop:
        if not stop.timed_out:  # Ctrl-C: no verdict
            return SelfCheck(None, None, (*notes, say("notebook: check stopped", stop=stop)), judged, stop)
        report = RunReport(Status.TIMED_OUT, say("stopped after", seconds=timeout))
    return SelfCheck(judge(exercise, prepared, report, submission="notebook", answer=code,
                           regrade=_regrade(exercise, prepared, timeout)), report, notes, judged)


def _regrade(exercise: Exercise, prepared: Prepared, timeout: float | None) -> Callable[[str], Result]:
    """Grades a rewrite of the answer cells as they were graded, so that check() proposes only a fix that
    passes (pipeline.verified); a rewrite stopped by the time limit or Ctrl-C is not proposed."""
    def regrade(code: str) -> Result:
        try:
            with stopping(timeout):
                report = run_steps(answer_steps(exercise, code, prepared.trials, (), prepared.inputs))
        except Stop:
            report = RunReport(Status.TIMED_OUT, say("stopped after", seconds=timeout))
        return judge(exercise, prepared, report, answer=code)
    return regrade


class Listener(Protocol):
    """Whoever a Checker tells about its checks (the workshop's client, workshop/client.py), with the commands it
    lends the checker (`check.join(URL)`, ...). What a listener does never reaches the check: an error in it is
    dropped."""

    @property
    def commands(self) -> Mapping[str, Callable[..., Any]]:
        """The checker's commands it lends: `{"join": join, ...}` makes `check.join(...)`."""

    def before(self, exercise_id: str) -> None:
        """Before a check runs."""

    def after(self, result: Result, report: RunReport) -> None:
        """After every check that found a result (a timed-out one too)."""

    def stopped(self, exercise_id: str, stop: Stop | None) -> None:
        """When Ctrl-C stopped a check with no result."""


class Checker:
    """The notebook's `check("<exercise>")`: judges the answer cells as last run with the exercise's public checks
    and prints what to fix. `check.last` holds what the last one found (a SelfCheck); the listeners given to it
    (`Checker(listener)`, or `listen(listener)`) hear of every check, and lend it their commands, so that
    `check.join(URL)` is the workshop client's join where the workshop listens (learner.py's `check`, which
    `from autograder import check` gives)."""

    def __init__(self, *listeners: Listener) -> None:
        self.last: SelfCheck | None = None
        self._listeners: list[Listener] = []
        for listener in listeners:
            self.listen(listener)

    def listen(self, listener: Listener) -> None:
        """Tells `listener` of every check from now on (once, however often it is given)."""
        if listener not in self._listeners:
            self._listeners.append(listener)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """A command of a listener (`check.join`, `check.stuck`, ...)."""
        if not name.startswith("_"):
            for listener in self.__dict__.get("_listeners", ()):
                command = listener.commands.get(name)
                if command is not None:
                    return command
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *(n for listener in self._listeners for n in listener.commands)})

    def __call__(self, exercise_id: str, *, timeout: float | None = None, history: list[str] | None = None,
                 namespace: Mapping[str, Any] | None = None) -> None:
        """Judges the answer cells as you last ran them with the exercise's public checks, and prints what to fix;
        stops after `timeout` seconds (default TIME_LIMIT). Returns nothing; `check.last` holds what it found (a
        SelfCheck). `history` and `namespace` stand for the kernel's, where a program calls it."""
        self._tell("before", exercise_id)
        try:
            found = self_check(exercise_id, history=history, namespace=namespace,
                               timeout=TIME_LIMIT if timeout is None else timeout)
        except Stop as stop:  # Ctrl-C while it prepared, before any code ran
            self._tell("stopped", exercise_id, stop)
            print(say("notebook: check stopped", stop=stop))
            return
        self.last = found
        for note in found.notes:
            print(say("notebook: note", note=note))
        if found.result is None:
            self._tell("stopped", exercise_id, found.stop)
            return
        print(feedback_text(found.result))
        print(footer())
        self._tell("after", found.result, found.report)

    def _tell(self, event: str, *args: Any) -> None:
        for listener in self._listeners:
            try:
                getattr(listener, event)(*args)
            except Exception:  # noqa: BLE001, S110 - what runs around a check must never break it
                pass


check = Checker()
"""The self-check on its own, with no listener (the notebook's `autograder.check` is learner.py's)."""


def outside_names(code: str, namespace: Mapping[str, Any]) -> list[str]:
    """Names the answer code uses, binds nowhere, and the kernel has: defined in some other cell, which the
    grader does not run. Python's builtins and the notebook's own (display, get_ipython) are not counted."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    used, bound = [], set(vars(builtins)) | {"display", "get_ipython", "__file__", "__name__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            used.append(node.id)
        elif isinstance(node, ast.Name):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return [name for name in dict.fromkeys(used) if name not in bound and name in namespace
            and not name.startswith("_")]


def _shell() -> Any:
    """IPython's running shell, if this is a notebook or an IPython console."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()
