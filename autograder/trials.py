"""Which trials a grading runs, and the inputs they get: drawn by the grader, seeded, hidden."""

from __future__ import annotations

import hashlib

import torch

from .core.outcome import Trial
from .core.spec import Exercise, Inputs

PUBLIC_SEED = 0
"""Seed of the public inputs, which ship with the package (public.py): the same in every grading."""


def plan(exercise: Exercise, devices: tuple[str, ...], public_only: bool) -> tuple[Trial, ...]:
    """Every (scenario, dtype, device) to run, public scenarios first (what the answer does on them cannot
    depend on a hidden input it met before); public scenarios only for a self-check."""
    scenarios = sorted((s for s in exercise.scenarios if s.public or not public_only), key=lambda s: not s.public)
    return tuple(
        Trial(s.name, str(dtype).removeprefix("torch."), device, public=s.public)
        for s in scenarios
        for dtype in s.dtypes
        for device in devices
    )


def derive_seed(*parts: str) -> int:
    """A 63-bit seed from strings, stable across runs and machines (unlike hash())."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def draw(exercise: Exercise, trials: tuple[Trial, ...], seed: int) -> dict[str, Inputs]:
    """The inputs of each scenario and dtype, the same for every device so devices can be compared."""
    inputs: dict[str, Inputs] = {}
    for trial in trials:
        key = trial.input_key
        if key in inputs:
            continue
        generator = torch.Generator().manual_seed(derive_seed(str(seed), exercise.id, key))
        inputs[key] = exercise.scenario(trial.scenario).draw(generator, trial.torch_dtype)
    return inputs


def draw_hidden(exercise: Exercise, trials: tuple[Trial, ...], salt: str) -> dict[str, Inputs]:
    """The inputs of the hidden scenarios among `trials` only, drawn with the one seed of the salt and the
    exercise: the same for every submission of a batch, other ones under another salt. The public ones
    ship with the package (public.load_public)."""
    hidden = tuple(t for t in trials if not t.public)
    return draw(exercise, hidden, derive_seed(salt, exercise.id))
