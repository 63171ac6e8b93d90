"""Values (a trial's inputs, an outcome's observations) as JSON plus safetensors: the one codec of the wire
between the grader and a job (runner/wire.py) and of the public data shipped with the package (public.py).

A set of values is a JSON object; a number, bool, string or null stands for itself, and `{"tensor": NAME}`
for the tensor NAME of the safetensors blob beside it. Nothing read back can run code: JSON is parsed into
builtins, safetensors holds only raw bytes with a dtype and a shape (no pickle anywhere), and `decode_values`
checks every value; a tensor belongs to one value only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import torch
from safetensors.torch import load as load_tensors

TENSOR = "tensor"
"""A JSON value {"tensor": NAME} stands for the tensor NAME of the safetensors blob."""


class CodecError(ValueError):
    """Values that cannot be read back: which, and why (for the developer: a caller says what it means)."""


def plain(value: Any) -> Any:
    """A JSON scalar as it stands (None, bool, int, float, str); CodecError for anything else."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise CodecError(f"holds a {type(value).__name__}")


def encode_values(values: Mapping[str, Any], prefix: str, tensors: dict[str, torch.Tensor]) -> dict[str, Any]:
    """The JSON of `values`; each tensor goes into `tensors` as `prefix/name` (a copy of its own, on the CPU:
    safetensors saves no views), marked {"tensor": "prefix/name"} in the JSON."""
    encoded: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, torch.Tensor):
            key = f"{prefix}/{name}"
            tensors[key] = value.detach().to("cpu").contiguous().clone()
            encoded[name] = {TENSOR: key}
        else:
            try:
                encoded[name] = plain(value)
            except CodecError as e:
                raise TypeError(f"{prefix}/{name}: cannot encode a {type(value).__name__}") from e
    return encoded


def decode_values(raw: Any, tensors: Mapping[str, torch.Tensor], used: set[str],
                  scalar: Callable[[Any], Any] = plain, name_limit: int | None = None) -> dict[str, Any]:
    """`encode_values` undone: each marker replaced by its tensor (noted in `used`; none twice), each other
    value passed through `scalar` (which raises CodecError for what it refuses), names cut to `name_limit`."""
    if not isinstance(raw, dict):
        raise CodecError("a set of values is not a JSON object")
    values: dict[str, Any] = {}
    for name, value in raw.items():
        if isinstance(value, dict):
            tensor = value.get(TENSOR)
            if set(value) != {TENSOR} or not isinstance(tensor, str) or tensor not in tensors or tensor in used:
                raise CodecError(f"{name[:200]!r} names no tensor of the safetensors blob (or one named before)")
            used.add(tensor)
            values[name[:name_limit]] = tensors[tensor]
        else:
            try:
                values[name[:name_limit]] = scalar(value)
            except CodecError as e:
                raise CodecError(f"{name[:200]!r} {e}") from None
    return values


_DTYPES = {torch.int64: "I64", torch.float64: "F64", torch.float32: "F32", torch.int32: "I32",
           torch.bfloat16: "BF16", torch.float16: "F16", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8",
           torch.bool: "BOOL"}
"""The dtypes written, in the order safetensors' own writer lays them out (its dtype order, descending)."""


def tensor_bytes(tensors: Mapping[str, torch.Tensor]) -> bytes:
    """The safetensors format, written without ctypes (a job's guard forbids ctypes; safetensors' own writer
    uses it), byte for byte as that writer writes it: by dtype (_DTYPES' order), then by name. Read back with
    safetensors' reader (`read_tensors`), which checks every offset."""
    plain = {name: t.detach().to("cpu").contiguous() for name, t in tensors.items()}
    plain = {name: t if t.dtype in _DTYPES else t.to(torch.float64) for name, t in plain.items()}
    rank = {dtype: i for i, dtype in enumerate(_DTYPES)}
    header: dict[str, Any] = {}
    chunks, offset = [], 0
    for name in sorted(plain, key=lambda name: (rank[plain[name].dtype], name)):
        t = plain[name]
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": _DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + b"".join(chunks)


def read_tensors(data: bytes) -> dict[str, torch.Tensor]:
    """A safetensors blob back into tensors; CodecError for anything that is not one."""
    try:
        return load_tensors(bytes(data))
    except Exception as e:  # noqa: BLE001 - safetensors raises its own error types for corrupt bytes
        raise CodecError(f"not a safetensors blob ({type(e).__name__}: {str(e)[:200]})") from None
