"""The wire between grader and worker: one frame of bytes each way, JSON for structure, safetensors for
tensors. No file crosses: the job goes down the zygote's stdin, the report comes back up a pipe.

A frame is MAGIC, the JSON's length (4 bytes, little-endian), the JSON, then a safetensors blob. Nothing
read back from a worker can run code when it is read: JSON is parsed into builtins and checked field by
field, and safetensors holds only raw bytes with a dtype and a shape (no pickle anywhere).
"""

from __future__ import annotations

import json
import math
from typing import Any

import torch
from safetensors.torch import load as load_tensors

from ..outcome import ErrorInfo, Outcome, RunReport, Trial
from ..spec import Inputs

SEP = "::"
MAGIC = b"AGW1"
MAX_JSON_BYTES = 4_000_000
"""A worker's JSON beyond this is a misbehaving submission, not something to parse."""
MAX_FRAME_BYTES = 256 * 1024**2
"""A report beyond this (JSON and tensors) is refused unread."""


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


_DTYPES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
           torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8",
           torch.bool: "BOOL"}


def _safetensors_bytes(tensors: dict[str, torch.Tensor]) -> bytes:
    """The safetensors format, written without ctypes (the worker's guard forbids ctypes; safetensors' own
    writer uses it). The grader reads it back with safetensors' reader, which checks every offset."""
    header: dict[str, Any] = {}
    chunks, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().to("cpu").contiguous()
        if t.dtype not in _DTYPES:
            t = t.to(torch.float64)
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": _DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + b"".join(chunks)


def pack(data: Any, tensors: dict[str, torch.Tensor]) -> bytes:
    """One frame: the JSON-able `data` and the tensors."""
    text = json.dumps(data, allow_nan=True, ensure_ascii=True).encode("ascii")
    return MAGIC + len(text).to_bytes(4, "little") + text + _safetensors_bytes(tensors)


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
        tensors = load_tensors(bytes(frame[8 + size:]))
    except Exception as e:  # noqa: BLE001 - safetensors raises its own error types for corrupt bytes
        raise WireError(f"the worker's observations cannot be read: {type(e).__name__}") from None
    return data, tensors


def _inputs_parts(inputs: dict[str, Inputs]) -> tuple[dict[str, dict[str, Any]], dict[str, torch.Tensor]]:
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for key, values in inputs.items():
        t, s = _split(values, key)
        tensors.update(t)
        scalars[key] = s
    return scalars, tensors


def _inputs_back(scalars: dict[str, dict[str, Any]], tensors: dict[str, torch.Tensor]) -> dict[str, Inputs]:
    inputs: dict[str, Inputs] = {key: dict(values) for key, values in scalars.items()}
    for name, tensor in tensors.items():
        key, field = name.split(SEP, 1)
        inputs.setdefault(key, {})[field] = tensor
    return inputs


def encode_job(exercise: str, code: str, trials: tuple[Trial, ...], inputs: dict[str, Inputs],
               hidden: frozenset[str] = frozenset()) -> bytes:
    """The job without the inputs in `hidden` (encode_inputs sends those apart, later)."""
    scalars, tensors = _inputs_parts({k: v for k, v in inputs.items() if k not in hidden})
    return pack({"exercise": exercise, "code": code, "trials": [t.key for t in trials], "scalars": scalars,
                 "hidden": sorted(hidden)}, tensors)


def decode_job(frame: bytes) -> tuple[str, str, tuple[Trial, ...], dict[str, Inputs], frozenset[str]]:
    """Worker side: the job the grader sent (trusted: the grader wrote it)."""
    job, tensors = unpack(frame)
    trials = tuple(Trial.from_key(k) for k in job["trials"])
    return job["exercise"], job["code"], trials, _inputs_back(job["scalars"], tensors), frozenset(job["hidden"])


def encode_inputs(inputs: dict[str, Inputs]) -> bytes:
    scalars, tensors = _inputs_parts(inputs)
    return pack(scalars, tensors)


def decode_inputs(frame: bytes) -> dict[str, Inputs]:
    scalars, tensors = unpack(frame)
    if not isinstance(scalars, dict):
        raise WireError("inputs must be an object")
    return _inputs_back(scalars, tensors)


def _error_to_json(e: ErrorInfo | None) -> dict[str, Any] | None:
    return None if e is None else e.to_plain()


def encode_report(report: RunReport) -> bytes:
    """Worker side: the report as one frame."""
    tensors: dict[str, torch.Tensor] = {}
    outcomes = {}
    for key, outcome in report.outcomes.items():
        t, s = _split(outcome.values, key)
        tensors.update(t)
        outcomes[key] = {"scalars": s, "error": _error_to_json(outcome.error)}
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
    raise WireError(f"an observation must be a number, bool or string, not {type(v).__name__}")


def decode_report(frame: bytes, trials: tuple[Trial, ...]) -> RunReport:
    """Grader side: parse and validate what the worker sent. Raises WireError when it is not valid."""
    data, tensors = unpack(frame)
    if not isinstance(data, dict):
        raise WireError("the worker's report is not an object")
    expected = {t.key for t in trials}
    outcomes: dict[str, Outcome] = {}
    raw = data.get("outcomes", {})
    if not isinstance(raw, dict) or not set(raw) <= expected:
        raise WireError("the worker reported trials that were not asked for")
    for key, o in raw.items():
        if not isinstance(o, dict) or not isinstance(o.get("scalars", {}), dict):
            raise WireError("a malformed trial outcome")
        values = {_str(k, 200): _scalar(v) for k, v in o.get("scalars", {}).items()}
        outcomes[key] = Outcome(values, _error_from_json(o.get("error")))
    for name, tensor in tensors.items():
        key, _, field = name.partition(SEP)
        if key not in outcomes or not field:
            raise WireError("observations for a trial with no outcome")
        outcomes[key].values[field[:200]] = tensor
    problems = data.get("problems", {})
    if not isinstance(problems, dict):
        raise WireError("malformed problems")
    return RunReport(
        load_error=_error_from_json(data.get("load_error")),
        problems={_str(k, 200): _str(v) for k, v in problems.items()},
        outcomes=outcomes,
    )
