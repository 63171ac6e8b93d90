"""An exercise's contract as data: the dimensions of the situations its notebook's text lets the code under test
meet, each with the values the text allows (issue 29 §1: the hidden scenarios span the whole contract).

Each exercise module declares `CONTRACT = Contract(...)` beside its `EXERCISE`. The values are words the
measurement in tests/test_contracts_spanned.py produces: it runs every scenario (public and hidden, for several
salts) with the reference, watches each call of a defined symbol (the state of the modules, tensors, optimizers
it is handed, and torch's grad mode) and holds that every allowed value of every dimension was reached. A
dimension the text does not open is not declared, or declared with the one value the text says (and then the
notebook says it). The module's name starts with `_`, so the discovery in __init__.py skips it.
"""

from __future__ import annotations

from dataclasses import dataclass

MODE = "mode"
"""`training` of each module handed to the code (or the model whose forward runs): "train", "eval"."""
GRAD_MODE = "grad mode"
"""torch's grad mode around each call: "enabled", "no_grad", "inference"."""
GRADS_AT_ENTRY = "gradients at entry"
"""The `.grad` of the parameters handed to the code, when it is called: "none", "zero", "non-zero"."""
LAYOUT = "layout"
"""Each tensor handed to the code: "contiguous", "not contiguous"."""
DTYPE = "dtype"
"""Each floating tensor handed to the code: "float32", "float64"."""
HOOKS = "hooks"
"""The module hooks present on the model or any of its submodules when its forward runs, and torch's global
module hooks: "none", "full backward", "full backward pre", "global full backward"."""
CALLS = "calls"
"""How many times the code is called on one object in one scenario: "one", "several"."""
OPTIMIZER = "optimizer"
"""The class of each optimizer handed to the code: "SGD", "Adam"."""
GRAD_NORM = "gradient norm from backward"
"""At each step of an optimizer handed to the code, the norm of the gradients backward left, before anything (a
clipping) changed them: "at most 1", "above 1" (so a clipping to the usual max_norm=1 acts)."""

KNOWN = {
    MODE: ("train", "eval"),
    GRAD_MODE: ("enabled", "no_grad", "inference"),
    GRADS_AT_ENTRY: ("none", "zero", "non-zero"),
    LAYOUT: ("contiguous", "not contiguous"),
    DTYPE: ("float32", "float64"),
    HOOKS: ("none", "full backward", "full backward pre", "global full backward"),
    CALLS: ("one", "several"),
    OPTIMIZER: ("SGD", "Adam"),
    GRAD_NORM: ("at most 1", "above 1"),
}
"""Every dimension the measurement knows, with every value it can report."""


@dataclass(frozen=True)
class Dimension:
    """One dimension of the contract: the values the notebook allows, and where it says so (its words)."""

    name: str
    allowed: tuple[str, ...]
    said: str

    def __post_init__(self) -> None:
        if self.name not in KNOWN:
            raise ValueError(f"unknown dimension {self.name!r}; known: {', '.join(KNOWN)}")
        unknown = set(self.allowed) - set(KNOWN[self.name])
        if unknown or not self.allowed:
            raise ValueError(f"dimension {self.name!r}: values {sorted(unknown)} not among {KNOWN[self.name]}")


@dataclass(frozen=True)
class Contract:
    """The dimensions of an exercise's contract. `symbol` names what is watched: the defined symbol whose calls
    the measurement records (a class: its instances' forward; a function: its calls)."""

    symbol: str
    dimensions: tuple[Dimension, ...]

    def __post_init__(self) -> None:
        names = [d.name for d in self.dimensions]
        if len(names) != len(set(names)):
            raise ValueError(f"a dimension declared twice: {names}")

    def allowed(self) -> dict[str, tuple[str, ...]]:
        return {d.name: d.allowed for d in self.dimensions}
