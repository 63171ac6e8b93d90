"""The wire between grader and worker: JSON for structure, safetensors for tensors.

Nothing read back from a worker can run code when it is read: JSON is parsed into builtins and
checked, and safetensors holds only raw bytes with a dtype and a shape (no pickle anywhere).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from ..files import write_atomically
from ..outcome import ErrorInfo, Outcome, RunReport, Trial
from ..spec import Inputs

SEP = "::"
MAX_REPORT_BYTES = 4_000_000
"""A worker's JSON report beyond this is a misbehaving submission, not something to parse."""


class WireError(Exception):
    """What a worker sent back is not a valid report."""


def _split(values: dict[str, Any], prefix: str) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    tensors, scalars = {}, {}
    for name, v in values.items():
        if isinstance(v, torch.Tensor):
            tensors[f"{prefix}{SEP}{name}"] = v.detach().to("cpu").contiguous().clone()
        else:
            scalars[name] = v
    return tensors, scalars


def _save_tensors(tensors: dict[str, torch.Tensor], path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    save_file(tensors, str(tmp))
    tmp.replace(path)


def write_job(directory: Path, exercise: str, code: str, trials: tuple[Trial, ...], inputs: dict[str, Inputs]) -> None:
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for key, values in inputs.items():
        t, s = _split(values, key)
        tensors.update(t)
        scalars[key] = s
    _save_tensors(tensors, directory / "inputs.safetensors")
    job = {"exercise": exercise, "code": code, "trials": [t.key for t in trials], "scalars": scalars}
    write_atomically(directory / "job.json", json.dumps(job))


def read_job(directory: Path) -> tuple[str, str, tuple[Trial, ...], dict[str, Inputs]]:
    job = json.loads((directory / "job.json").read_text(encoding="utf-8"))
    inputs: dict[str, Inputs] = {key: dict(values) for key, values in job["scalars"].items()}
    for name, tensor in load_file(str(directory / "inputs.safetensors")).items():
        key, field = name.split(SEP, 1)
        inputs.setdefault(key, {})[field] = tensor
    return job["exercise"], job["code"], tuple(Trial.from_key(k) for k in job["trials"]), inputs


def _error_to_json(e: ErrorInfo | None) -> dict[str, Any] | None:
    return None if e is None else {"type": e.type, "message": e.message, "line": e.line, "code": e.code,
                                   "culprit": e.culprit}


def write_report(directory: Path, report: RunReport) -> None:
    """Worker side: the report as report.json and observations.safetensors."""
    tensors: dict[str, torch.Tensor] = {}
    outcomes = {}
    for key, outcome in report.outcomes.items():
        t, s = _split(outcome.values, key)
        tensors.update(t)
        outcomes[key] = {"scalars": s, "error": _error_to_json(outcome.error), "seconds": outcome.seconds}
    _save_tensors(tensors, directory / "observations.safetensors")
    data = {"load_error": _error_to_json(report.load_error), "problems": report.problems, "outcomes": outcomes,
            "seconds": report.seconds}
    write_atomically(directory / "report.json", json.dumps(data, allow_nan=True))


def _str(v: Any, limit: int = 4000) -> str:
    if not isinstance(v, str):
        raise WireError(f"expected a string, got {type(v).__name__}")
    return v[:limit]


def _opt_int(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise WireError("expected an integer line number")
    return v


def _error_from_json(d: Any) -> ErrorInfo | None:
    if d is None:
        return None
    if not isinstance(d, dict):
        raise WireError("an error must be an object")
    culprit = d.get("culprit")
    if culprit is not None and not isinstance(culprit, dict):
        raise WireError("a culprit must be an object")
    code = d.get("code")
    return ErrorInfo(_str(d.get("type")), _str(d.get("message", "")), _opt_int(d.get("line")),
                     None if code is None else _str(code), culprit)


def _scalar(v: Any) -> Any:
    if isinstance(v, (bool, int, str)):
        return v[:2000] if isinstance(v, str) else v
    if isinstance(v, float):
        return v if math.isfinite(v) else float("nan")
    raise WireError(f"an observation must be a number, bool or string, not {type(v).__name__}")


def read_report(directory: Path, trials: tuple[Trial, ...]) -> RunReport:
    """Grader side: parse and validate what the worker wrote. Raises WireError when it is not valid."""
    path = directory / "report.json"
    if not path.exists():
        raise WireError("the worker wrote no report")
    if path.stat().st_size > MAX_REPORT_BYTES:
        raise WireError("the worker's report is too large")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise WireError(f"the worker's report is not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise WireError("the worker's report is not an object")
    try:
        tensors = load_file(str(directory / "observations.safetensors"))
    except Exception as e:  # safetensors raises its own error types for corrupt files
        raise WireError(f"the worker's observations cannot be read: {e}") from None
    expected = {t.key for t in trials}
    outcomes: dict[str, Outcome] = {}
    raw = data.get("outcomes", {})
    if not isinstance(raw, dict) or not set(raw) <= expected:
        raise WireError("the worker reported trials that were not asked for")
    for key, o in raw.items():
        if not isinstance(o, dict) or not isinstance(o.get("scalars", {}), dict):
            raise WireError("a malformed trial outcome")
        values = {str(k): _scalar(v) for k, v in o.get("scalars", {}).items()}
        outcomes[key] = Outcome(values, _error_from_json(o.get("error")), float(o.get("seconds", 0.0)))
    for name, tensor in tensors.items():
        key, field = name.split(SEP, 1)
        if key not in outcomes:
            raise WireError("observations for a trial with no outcome")
        outcomes[key].values[field] = tensor
    problems = data.get("problems", {})
    if not isinstance(problems, dict):
        raise WireError("malformed problems")
    return RunReport(
        load_error=_error_from_json(data.get("load_error")),
        problems={_str(k, 200): _str(v) for k, v in problems.items()},
        outcomes=outcomes,
        seconds=float(data.get("seconds", 0.0)),
    )
