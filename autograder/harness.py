"""Runs an exercise's scenarios against a namespace: the student's (in a worker) or the reference's.

Everything it returns has been turned into plain values here, on the side that ran the code.
"""

from __future__ import annotations

import linecache
import math
import time
import traceback
from collections.abc import Mapping
from typing import Any

import torch

from .outcome import ErrorInfo, Outcome, RunReport, Trial
from .spec import Exercise, Inputs

ANSWER_FILE = "<answer>"
"""The file name answer code is compiled under, so tracebacks can be located in it."""


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


def run_trials(
    exercise: Exercise,
    namespace: Mapping[str, Any],
    trials: tuple[Trial, ...],
    inputs: Mapping[str, Inputs],
    filename: str = ANSWER_FILE,
) -> dict[str, Outcome]:
    """Runs each trial, keeping what it observed even when it raised."""
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
        except SystemExit as e:
            error = ErrorInfo("SystemExit", f"the code called exit({e.code})")
        seconds = time.perf_counter() - start
        outcomes[trial.key] = Outcome({k: plain(v) for k, v in obs.items()}, error, seconds)
    return outcomes


def run_answer(exercise: Exercise, code: str, trials: tuple[Trial, ...], inputs: Mapping[str, Inputs]) -> RunReport:
    """Loads answer code and runs every trial: the whole job of a worker, minus the wire."""
    start = time.perf_counter()
    namespace, load_error = load_answer(code)
    if load_error is not None:
        return RunReport(load_error=load_error, seconds=time.perf_counter() - start)
    problems = symbol_problems(exercise, namespace)
    if problems:
        return RunReport(problems=problems, seconds=time.perf_counter() - start)
    outcomes = run_trials(exercise, namespace, trials, inputs)
    return RunReport(outcomes=outcomes, seconds=time.perf_counter() - start)


def run_reference(exercise: Exercise, trials: tuple[Trial, ...], inputs: Mapping[str, Inputs]) -> dict[str, Outcome]:
    """The reference's observations on the CPU, for every scenario and dtype among `trials`."""
    cpu = tuple(dict.fromkeys(Trial(t.scenario, t.dtype, "cpu") for t in trials))
    return run_trials(exercise, exercise.reference, cpu, inputs, filename="<reference>")
