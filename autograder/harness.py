"""Runs an exercise's scenarios against a namespace: the student's (in a worker) or the reference's.

Everything it returns has been turned into plain values here, on the side that ran the code.
"""

from __future__ import annotations

import linecache
import math
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import torch

from .outcome import ErrorInfo, Outcome, RunReport, Trial
from .spec import INPLACE_ERROR, Exercise, Inputs

ANSWER_FILE = "<answer>"
"""The file name answer code is compiled under, so tracebacks can be located in it."""


def guarded_namespaces() -> dict[str, Any]:
    """Namespaces whose functions the harness relies on, by name: torch, Tensor, autograd, functional..."""
    import torch.nn.functional as functional

    return {"torch": torch, "torch.Tensor": torch.Tensor, "torch.autograd": torch.autograd,
            "torch.nn.functional": functional, "torch.nn.Module": torch.nn.Module,
            "torch.autograd.Function": torch.autograd.Function, "torch.testing": torch.testing}


def snapshot() -> dict[str, Any]:
    """Every attribute of the guarded namespaces (taken before answer code runs), compared by identity
    later (with `is`, not id(): in a worker, every id() call is an audit event)."""
    return {f"{prefix}.{name}": value for prefix, space in guarded_namespaces().items()
            for name, value in vars(space).items()}


def tampered(before: dict[str, Any]) -> list[str]:
    """Attributes of torch that answer code replaced or deleted since `before` (additions are fine)."""
    now = snapshot()
    missing = object()
    return sorted(name for name, value in before.items() if now.get(name, missing) is not value)


def _tamper_error(names: list[str]) -> ErrorInfo:
    shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
    return ErrorInfo("TamperError", f"your code replaced parts of torch ({shown}); the grader cannot trust "
                     "what it observes after that, so this counts as a failure. Do not monkeypatch torch.")


def settle_torch() -> None:
    """Imports what torch imports lazily and that rebinds its own attributes when it does (torch._dynamo
    wraps torch.manual_seed, pulled in by the first optimizer), so only answer code can change them."""
    import torch._dynamo  # noqa: F401
    import torch.optim  # noqa: F401


def load_answer(code: str, filename: str = ANSWER_FILE) -> tuple[dict[str, Any], ErrorInfo | None]:
    """Executes answer code in a fresh namespace; returns it and the error that stopped it, if any."""
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    namespace: dict[str, Any] = {"__name__": "__answer__"}
    try:
        exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - running the answer is the point
    except SyntaxError as e:
        line = e.lineno
        text = e.text.rstrip("\n") if e.text else None
        return namespace, ErrorInfo("SyntaxError", str(e.msg), line, text)
    except KeyboardInterrupt:
        raise  # Ctrl-C, or a self-check's time limit: it stops the check and is never a verdict
    except BaseException as e:  # noqa: BLE001 - SystemExit from a submission is its verdict too
        return namespace, error_info(e, filename)
    return namespace, None


def error_info(exc: BaseException, filename: str = ANSWER_FILE) -> ErrorInfo:
    """The exception as plain data, located at the innermost frame of the answer code."""
    line = code = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line, code = frame.lineno, frame.line
    message = str(exc)
    return ErrorInfo(type(exc).__name__, message[:4000], line, code)


def symbol_problems(exercise: Exercise, namespace: Mapping[str, Any]) -> dict[str, str]:
    """What is wrong with each name the exercise needs; empty when all are usable."""
    problems = {}
    for symbol in exercise.defines:
        if symbol.name not in namespace:
            problems[symbol.name] = (
                f"`{symbol.name}` is not defined. Define it in an answer cell (the grader runs only "
                "the answer cells, so imports and helpers must be there too)."
            )
        else:
            problem = symbol.problem_with(namespace[symbol.name])
            if problem:
                problems[symbol.name] = problem
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
    """For an in-place error: run the trial again under the locator to name the line that did it."""
    from .blame import culprit_for

    try:
        report = culprit_for(rerun, frames)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - the locator is a bonus; the error stands without it
        return error
    return replace(error, culprit=report) if report else error


def run_trials(
    exercise: Exercise,
    namespace: Mapping[str, Any],
    trials: tuple[Trial, ...],
    inputs: Mapping[str, Inputs],
    filename: str = ANSWER_FILE,
    culprit_frames: str | None = ANSWER_FILE,
    pristine: dict[str, Any] | None = None,
) -> dict[str, Outcome]:
    """Runs each trial, keeping what it observed even when it raised. An in-place error is run again
    under the culprit locator, whose report names the line (frames of `culprit_frames`; None: any
    frame outside torch and this package). With `pristine` (a snapshot), a trial after which torch was
    patched keeps no observation."""
    outcomes = {}
    for i, trial in enumerate(trials):
        scenario = exercise.scenario(trial.scenario)
        device = torch.device(trial.device)
        trial_inputs = to_device(inputs[f"{trial.scenario}/{trial.dtype}"], device)
        torch.manual_seed(1000 + i)  # stochastic code is seeded, but no check depends on the stream
        obs: dict[str, Any] = {}
        error = None
        start = time.perf_counter()
        try:
            scenario.run(namespace, trial_inputs, device, obs)
        except Exception as e:  # noqa: BLE001 - any error of the code under test is an observation
            error = error_info(e, filename)
            if INPLACE_ERROR.search(error.message):
                def rerun(scenario=scenario, trial=trial, device=device, seed=1000 + i) -> None:
                    torch.manual_seed(seed)
                    scenario.run(namespace, to_device(inputs[f"{trial.scenario}/{trial.dtype}"], device), device, {})

                error = _with_culprit(error, rerun, culprit_frames)
        except SystemExit as e:
            error = ErrorInfo("SystemExit", f"the code called exit({e.code})")
        seconds = time.perf_counter() - start
        changed = tampered(pristine) if pristine is not None else []
        if changed:  # observations made with a patched torch are worthless: keep none
            outcomes[trial.key] = Outcome({}, _tamper_error(changed), seconds)
            continue
        outcomes[trial.key] = Outcome({k: plain(v) for k, v in obs.items()}, error, seconds)
    return outcomes


def start_answer(exercise: Exercise, code: str) -> tuple[dict[str, Any], dict[str, Any], RunReport | None]:
    """Loads answer code: its namespace and torch as it was before the code ran (a snapshot), and the
    RunReport that ends the run there (a load error, tampering, unusable names), or None to go on."""
    settle_torch()
    pristine = snapshot()
    namespace, load_error = load_answer(code)
    changed = tampered(pristine)
    if changed:
        load_error = _tamper_error(changed)
    if load_error is not None:
        return namespace, pristine, RunReport(load_error=load_error)
    problems = symbol_problems(exercise, namespace)
    return namespace, pristine, RunReport(problems=problems) if problems else None


def run_answer(exercise: Exercise, code: str, trials: tuple[Trial, ...], inputs: Mapping[str, Inputs]) -> RunReport:
    """Loads answer code and runs every trial, in order: the whole job of a worker, minus the wire."""
    start = time.perf_counter()
    namespace, pristine, ended = start_answer(exercise, code)
    if ended is not None:
        return replace(ended, seconds=time.perf_counter() - start)
    outcomes = run_trials(exercise, namespace, trials, inputs, pristine=pristine)
    return RunReport(outcomes=outcomes, seconds=time.perf_counter() - start)


def run_reference(exercise: Exercise, trials: tuple[Trial, ...], inputs: Mapping[str, Inputs],
                  reference: Mapping[str, Any] | None = None) -> dict[str, Outcome]:
    """The reference's observations on the CPU, for every scenario and dtype among `trials`. The reference
    is references/<id>.py (ReferencesMissing where it is not installed) unless `reference` is given."""
    from .reference_store import load_reference  # only the grader loads references; workers import this module too

    namespace = load_reference(exercise.id) if reference is None else reference
    cpu = tuple(dict.fromkeys(Trial(t.scenario, t.dtype, "cpu") for t in trials))
    return run_trials(exercise, namespace, cpu, inputs, filename="<reference>", culprit_frames="<reference>")
