"""The public trials' inputs and the reference's outcomes on them, shipped inside the package.

The notebook self-check runs where the reference implementations are not installed (references/ is
not part of the package), so it judges against these instead: the inputs of the public scenarios,
drawn with trials.PUBLIC_SEED, and the reference's outcomes on them, on the CPU. `autograder publish`
makes them from the references; `autograder publish --check` fails where they have drifted.

Each exercise has `exercises/public/<id>.json` (the structure: numbers, strings, errors, and the name of
each tensor) and `<id>.safetensors` (the tensors), coded as the wire to a job codes them (codec.py): both
are read back without pickle, and checked against the exercise before use.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import torch

from . import trials as trial_plan
from .codec import decode_values, encode_values, read_tensors, tensor_bytes
from .core.outcome import ErrorInfo, Outcome, Trial
from .core.spec import Exercise, Inputs
from .feedback.wording import say
from .reference_store import run_reference

PUBLIC_DIR = Path(__file__).resolve().parent / "exercises" / "public"
FORMAT = 1
"""Version of the file layout; a file of another version is refused, never guessed at."""

class PublicDataError(Exception):
    """The shipped public data is missing, unreadable, or does not fit the exercise as it is now."""


def paths(exercise_id: str, folder: Path = PUBLIC_DIR) -> tuple[Path, Path]:
    """The exercise's JSON file and safetensors file."""
    return folder / f"{exercise_id}.json", folder / f"{exercise_id}.safetensors"


def public_trials(exercise: Exercise) -> tuple[Trial, ...]:
    """The trials the shipped data covers: the public scenarios, each dtype, on the CPU."""
    return trial_plan.plan(exercise, ("cpu",), public_only=True)


# --- making ---------------------------------------------------------------------------------------


def make_public(exercise: Exercise) -> tuple[str, dict[str, torch.Tensor]]:
    """Draws the public inputs and runs the reference on them (needs references/): the JSON text and the
    tensors it names. Deterministic on the CPU for a given torch, so drift can be checked exactly."""
    trials = public_trials(exercise)
    inputs = trial_plan.draw(exercise, trials, trial_plan.PUBLIC_SEED)
    expected = run_reference(exercise, trials, inputs)
    tensors: dict[str, torch.Tensor] = {}
    data = {
        "format": FORMAT,
        "exercise": exercise.id,
        "made_by": "autograder publish (from references/); do not edit",
        "trials": [t.key for t in trials],
        "inputs": {key: encode_values(values, f"inputs/{key}", tensors) for key, values in inputs.items()},
        "expected": {key: {"values": encode_values(o.values, f"expected/{key}", tensors),
                           "error": _encode_error(o.error)}
                     for key, o in expected.items()},
    }
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n", tensors


def _encode_error(error: ErrorInfo | None) -> dict[str, Any] | None:
    return None if error is None else error.to_plain()


def write_public(exercise: Exercise, folder: Path = PUBLIC_DIR) -> tuple[Path, Path]:
    """Makes the exercise's public data and writes its two files (each replaced whole)."""
    text, tensors = make_public(exercise)
    json_path, tensor_path = paths(exercise.id, folder)
    _replace(json_path, text.encode("utf-8"))
    _replace(tensor_path, tensor_bytes(tensors))
    return json_path, tensor_path


def _replace(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


DRIFT_TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-5, torch.bfloat16: 1e-2, torch.float16: 1e-3}
"""Relative (and absolute) tolerance of a shipped float against a fresh one, by the dtype it was computed in.
The same torch rounds differently on another CPU (AVX-512, AVX2 or none: ATEN_CPU_CAPABILITY) and with
another number of threads (the order of a sum's terms): a float32 loss may move by a unit in its last place
(1.261749029 against 1.261749268 in the capstone, about 2e-7 relative). Anything past these is a real change
of the reference or the inputs."""


def same_value(want: Any, got: Any, dtype: torch.dtype | None) -> bool:
    """A shipped value (JSON or tensor) against a fresh one: a tensor's floats within its own dtype's
    DRIFT_TOLERANCE; a plain float (a loss read with `.item()`, a drawn learning rate) within that of
    `dtype`, the dtype of the trial that made it (None: exactly); everything else exactly."""
    if isinstance(want, torch.Tensor) or isinstance(got, torch.Tensor):
        return isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor) and _same_tensor(want, got)
    if isinstance(want, float) or isinstance(got, float):
        if not (isinstance(want, (int, float)) and isinstance(got, (int, float))) \
                or isinstance(want, bool) or isinstance(got, bool):
            return False
        if want == got or (math.isnan(want) and math.isnan(got)):
            return True
        tol = DRIFT_TOLERANCE.get(dtype, 0.0) if dtype is not None else 0.0
        return math.isclose(want, got, rel_tol=tol, abs_tol=tol)
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(same_value(want[k], got[k], dtype) for k in want)
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(same_value(x, y, dtype) for x, y in zip(want, got))
    return type(want) is type(got) and want == got


def _same_tensor(want: torch.Tensor, got: torch.Tensor) -> bool:
    if want.dtype != got.dtype or want.shape != got.shape:
        return False
    if want.dtype in DRIFT_TOLERANCE:
        tol = DRIFT_TOLERANCE[want.dtype]
        return torch.allclose(want, got, rtol=tol, atol=tol, equal_nan=True)
    return torch.equal(want, got)


def _json_drift(exercise: Exercise, shipped: Any, fresh: dict[str, Any]) -> list[str]:
    """Where the shipped JSON differs from a fresh one: each trial's inputs and expected outcome at the
    tolerance of the trial's dtype, the rest exactly."""
    if not isinstance(shipped, dict) or shipped.keys() != fresh.keys():
        return ["its layout differs from the one the reference makes now"]
    dtypes = {}
    for trial in public_trials(exercise):
        dtypes[trial.key] = dtypes[trial.input_key] = trial.torch_dtype
    problems = [f"`{key}` differs" for key in fresh if key not in ("inputs", "expected")
                and not same_value(fresh[key], shipped[key], None)]
    for section in ("inputs", "expected"):
        want, got = fresh[section], shipped[section]
        if not isinstance(got, dict) or list(got) != list(want):
            problems.append(f"its {section} are not those of the public trials")
            continue
        problems += [f"{section} of {key} differ" for key in want if not same_value(want[key], got[key], dtypes[key])]
    return problems


def drift(exercise: Exercise, folder: Path = PUBLIC_DIR) -> list[str]:
    """How the shipped files differ from freshly made ones (floats within their dtype's DRIFT_TOLERANCE, the
    rest exactly). Empty when they match."""
    text, tensors = make_public(exercise)
    json_path, tensor_path = paths(exercise.id, folder)
    try:
        shipped_text = json_path.read_text(encoding="utf-8")
        shipped = read_tensors(tensor_path.read_bytes())
        json_problems = _json_drift(exercise, json.loads(shipped_text), json.loads(text))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return [f"{exercise.id}: cannot read the shipped files ({e})"]
    problems = [f"{json_path.name}: {p}" for p in json_problems]
    for name in sorted(set(tensors) | set(shipped)):
        want, got = tensors.get(name), shipped.get(name)
        if want is None or got is None:
            problems.append(f"{tensor_path.name}: tensor {name!r} is {'extra' if want is None else 'missing'}")
        elif not _same_tensor(want, got):
            problems.append(f"{tensor_path.name}: tensor {name!r} differs")
    return [f"{exercise.id}: {p}" for p in problems]


# --- reading --------------------------------------------------------------------------------------


def load_public(exercise: Exercise, folder: Path = PUBLIC_DIR) -> tuple[tuple[Trial, ...], dict[str, Inputs],
                                                                        dict[str, Outcome]]:
    """The public trials (CPU), their inputs by "scenario/dtype" (as trials.draw returns them) and the
    reference's outcomes by trial key (as reference_store.run_reference returns them)."""
    json_path, tensor_path = paths(exercise.id, folder)
    try:
        data = json.loads(json_path.read_text(encoding="utf-8"))
        tensors = read_tensors(tensor_path.read_bytes())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise _unusable(json_path, f"cannot read it ({e})") from None
    trials = public_trials(exercise)
    try:
        inputs, expected = _decode(exercise, trials, data, tensors)
    except (KeyError, TypeError, ValueError) as e:
        raise _unusable(json_path, str(e)) from None
    return trials, inputs, expected


def _unusable(path: Path, why: str) -> PublicDataError:
    return PublicDataError(say("run: public data unusable", path=path, why=why))


def _decode(exercise: Exercise, trials: tuple[Trial, ...], data: Any, tensors: dict[str, torch.Tensor]):
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("exercise") != exercise.id:
        raise ValueError(f"it is not format {FORMAT} data of exercise {exercise.id}")
    if data.get("trials") != [t.key for t in trials]:
        raise ValueError("its trials are not the exercise's public trials")
    input_keys = list(dict.fromkeys(t.input_key for t in trials))
    raw_inputs, raw_expected = data.get("inputs"), data.get("expected")
    if not isinstance(raw_inputs, dict) or list(raw_inputs) != input_keys:
        raise ValueError("its inputs are not those of the public scenarios")
    if not isinstance(raw_expected, dict) or list(raw_expected) != [t.key for t in trials]:
        raise ValueError("its expected outcomes are not those of the public trials")
    used: set[str] = set()
    inputs = {key: decode_values(raw_inputs[key], tensors, used) for key in input_keys}
    expected = {}
    for key, raw in raw_expected.items():
        if not isinstance(raw, dict) or set(raw) != {"values", "error"}:
            raise ValueError(f"the outcome of {key} is malformed")
        expected[key] = Outcome(decode_values(raw["values"], tensors, used), _decode_error(raw["error"]))
    if used != set(tensors):
        raise ValueError(f"{len(set(tensors) - used)} of its tensors belong to nothing")
    return inputs, expected


def _decode_error(raw: Any) -> ErrorInfo | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != set(ErrorInfo("", "").to_plain()):
        raise ValueError("an error is malformed")
    return ErrorInfo.from_plain(raw)
