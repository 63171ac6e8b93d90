"""The wire between the grader and a job's process: one frame of bytes each way, JSON for structure, safetensors
for tensors, the values of both coded as the public data's are (codec.py). No file crosses: the job goes down the
relay's stdin (protocol.py), the report comes back up a pipe.

A frame is MAGIC, the JSON's length (4 bytes, little-endian), the JSON, then a safetensors blob. Nothing
read back from a job can run code when it is read: JSON is parsed into builtins and checked field by
field, and safetensors holds only raw bytes with a dtype and a shape (no pickle anywhere).
"""

from __future__ import annotations

import json
import math
from typing import Any

import torch

from ..codec import CodecError, decode_values, encode_values, read_tensors, tensor_bytes
from ..core.outcome import ErrorInfo, Outcome, RunReport, Trial
from ..core.spec import Inputs

MAGIC = b"AGW1"
MAX_JSON_BYTES = 4_000_000
"""A job's JSON beyond this is a misbehaving submission, not something to parse."""
MAX_FRAME_BYTES = 256 * 1024**2
"""A report beyond this (JSON and tensors) is refused unread."""


class WireError(Exception):
    """What a job sent back is not a valid report."""


def pack(data: Any, tensors: dict[str, torch.Tensor]) -> bytes:
    """One frame: the JSON-able `data` and the tensors."""
    text = json.dumps(data, allow_nan=True, ensure_ascii=True).encode("ascii")
    return MAGIC + len(text).to_bytes(4, "little") + text + tensor_bytes(tensors)


def unpack(frame: bytes) -> tuple[Any, dict[str, torch.Tensor]]:
    """A frame back into (JSON value, tensors); WireError for anything that is not a valid frame."""
    if len(frame) > MAX_FRAME_BYTES:
        raise WireError("the worker's report is too large")
    if len(frame) < 8 or frame[:4] != MAGIC:
        raise WireError("the worker's report is not a report")
    size = int.from_bytes(frame[4:8], "little")
    if size > MAX_JSON_BYTES or 8 + size > len(frame):
        raise WireError("the worker's report is too large or cut short")
    try:
        data = json.loads(frame[8:8 + size].decode("ascii"))
    except (ValueError, RecursionError, UnicodeDecodeError) as e:
        raise WireError(f"the worker's report is not valid JSON: {type(e).__name__}") from None
    try:
        tensors = read_tensors(frame[8 + size:])
    except CodecError as e:
        raise WireError(f"the worker's observations cannot be read: {e}") from None
    return data, tensors


def _inputs_json(inputs: dict[str, Inputs], tensors: dict[str, torch.Tensor]) -> dict[str, dict[str, Any]]:
    return {key: encode_values(values, f"inputs/{key}", tensors) for key, values in inputs.items()}


def _inputs_back(raw: Any, tensors: dict[str, torch.Tensor]) -> dict[str, Inputs]:
    if not isinstance(raw, dict):
        raise WireError("inputs must be an object")
    used: set[str] = set()
    try:
        inputs = {key: decode_values(values, tensors, used) for key, values in raw.items()}
    except CodecError as e:
        raise WireError(f"malformed inputs: {e}") from None
    if used != set(tensors):
        raise WireError("tensors that belong to no input")
    return inputs


def encode_job(exercise: str, code: str, trials: tuple[Trial, ...], inputs: dict[str, Inputs],
               hidden: frozenset[str] = frozenset()) -> bytes:
    """The job without the inputs in `hidden` (encode_inputs sends those apart, later)."""
    tensors: dict[str, torch.Tensor] = {}
    data = _inputs_json({k: v for k, v in inputs.items() if k not in hidden}, tensors)
    return pack({"exercise": exercise, "code": code, "trials": [t.key for t in trials], "inputs": data,
                 "hidden": sorted(hidden)}, tensors)


def decode_job(frame: bytes) -> tuple[str, str, tuple[Trial, ...], dict[str, Inputs], frozenset[str]]:
    """Job side: the job the grader sent (trusted: the grader wrote it)."""
    job, tensors = unpack(frame)
    trials = tuple(Trial.from_key(k) for k in job["trials"])
    return job["exercise"], job["code"], trials, _inputs_back(job["inputs"], tensors), frozenset(job["hidden"])


def encode_inputs(inputs: dict[str, Inputs]) -> bytes:
    tensors: dict[str, torch.Tensor] = {}
    return pack(_inputs_json(inputs, tensors), tensors)


def decode_inputs(frame: bytes) -> dict[str, Inputs]:
    data, tensors = unpack(frame)
    return _inputs_back(data, tensors)


def _error_to_json(e: ErrorInfo | None) -> dict[str, Any] | None:
    return None if e is None else e.to_plain()


def encode_report(report: RunReport) -> bytes:
    """Job side: the report as one frame (its outcomes as the public data's expected outcomes are)."""
    tensors: dict[str, torch.Tensor] = {}
    outcomes = {key: {"values": encode_values(outcome.values, f"outcomes/{key}", tensors),
                      "error": _error_to_json(outcome.error)} for key, outcome in report.outcomes.items()}
    data = {"load_error": _error_to_json(report.load_error), "problems": report.problems, "outcomes": outcomes}
    return pack(data, tensors)


def _str(v: Any, limit: int = 4000) -> str:
    if not isinstance(v, str):
        raise WireError(f"expected a string, got {type(v).__name__}")
    return v[:limit]


def _error_from_json(d: Any) -> ErrorInfo | None:
    if d is None:
        return None
    try:
        return ErrorInfo.from_plain(d)
    except ValueError as e:
        raise WireError(str(e)) from None


def _scalar(v: Any) -> Any:
    if isinstance(v, (bool, int, str)):
        return v[:2000] if isinstance(v, str) else v
    if isinstance(v, float):
        return v if math.isfinite(v) else float("nan")
    raise CodecError(f"an observation must be a number, bool or string, not {type(v).__name__}")


def decode_report(frame: bytes, trials: tuple[Trial, ...]) -> RunReport:
    """Grader side: parse and validate what the job sent. Raises WireError when it is not valid."""
    data, tensors = unpack(frame)
    if not isinstance(data, dict):
        raise WireError("the worker's report is not an object")
    expected = {t.key for t in trials}
    outcomes: dict[str, Outcome] = {}
    raw = data.get("outcomes", {})
    if not isinstance(raw, dict) or not set(raw) <= expected:
        raise WireError("the worker reported trials that were not asked for")
    used: set[str] = set()
    for key, o in raw.items():
        if not isinstance(o, dict) or not set(o) <= {"values", "error"}:
            raise WireError("a malformed trial outcome")
        try:
            values = decode_values(o.get("values", {}), tensors, used, _scalar, name_limit=200)
        except CodecError as e:
            raise WireError(f"a malformed trial outcome: {e}") from None
        outcomes[key] = Outcome(values, _error_from_json(o.get("error")))
    if used != set(tensors):
        raise WireError("observations for a trial with no outcome")
    problems = data.get("problems", {})
    if not isinstance(problems, dict):
        raise WireError("malformed problems")
    return RunReport(
        load_error=_error_from_json(data.get("load_error")),
        problems={_str(k, 200): _str(v) for k, v in problems.items()},
        outcomes=outcomes,
    )
