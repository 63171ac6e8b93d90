"""Tables the book generates from measurements, so that no row states one example as a property.

A table is columns and rows. A row is a claim with its declared cases: the set of situations it speaks of
(an op on a tensor and on a view of one; an optimizer default, foreach and fused; a checkpoint with early
stop on and off ...). Each column measures every case of every row on the installed torch, and the cell
shows the value the cases share. Where the cases disagree the cell cannot say one verdict: it says
"depends:" and names each case with what it measured. A row may also declare what it expects (`expect`):
then a case that measures otherwise stops the page's build (`ClaimBroken`), so the words around the table
cannot go stale unnoticed.

The op zoo (`OPS`) and the measurements (`saved_roles`, `write_outcome`, `version_moved`, `step_moved`,
`outcome`, `clause`) read torch itself: a backward node's `_saved_*` attributes, `_version`, and what
backward does. In the package, not beside the chapters, so that a page downloaded from the book runs
wherever the course is installed. Nothing here is imported by `import autograder`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..core.messages import INPLACE_ERROR, LEAF_INPLACE_ERROR
from ..feedback.wording import say


class ClaimBroken(AssertionError):
    """A row declared what it expects, and a case measured otherwise on this torch."""


class Outcome(enum.Enum):
    """What a program with an in-place write did, from the write to the gradient."""

    AT_THE_WRITE = "at the write"
    AT_BACKWARD = "at backward"
    AT_BACKWARD_LEAF = "at backward, leaf"
    AT_BACKWARD_OTHER = "at backward, other"
    RIGHT = "right"
    WRONG = "wrong"
    NO_ERROR = "no error"

    def words(self) -> str:
        return say(f"notebook: measured {self.value}")


def words_of(value: Any) -> str:
    """A measured value as a reader sees it: an Outcome in the catalogue's words, a set of roles listed, a
    number or a name as it is."""
    if isinstance(value, Outcome):
        return value.words()
    if isinstance(value, frozenset):
        return ", ".join(sorted(str(v) for v in value)) or "-"
    if isinstance(value, tuple):
        return ", ".join(f"`{attr}`: {role}" for attr, role in value) or "nothing"
    if value is None:
        return "-"
    return f"`{value}`" if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class Column:
    """One measured property: `measure(case)` gives a hashable value; `words(value)` what the cell says."""

    title: str
    measure: Callable[[Any], Hashable]
    words: Callable[[Any], str] = words_of


@dataclass(frozen=True)
class Row:
    """A claim: `label` (what the reader reads in the first column) over `cases` (name -> what each column
    measures), and optionally what each column is expected to measure for every case (`expect`, by title)."""

    label: str
    cases: Mapping[str, Any]
    expect: Mapping[str, Hashable] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.cases:
            raise TypeError(f"row {self.label!r} declares no case")


@dataclass(frozen=True)
class Cell:
    """A row's measurements in one column: case name -> value, in the row's order."""

    values: Mapping[str, Hashable]

    @property
    def agreed(self) -> bool:
        return len(set(self.values.values())) == 1

    def verdict(self) -> Hashable:
        """The one value every case measured; raises where they differ (no single verdict exists)."""
        if not self.agreed:
            raise ClaimBroken(f"the cases disagree: {dict(self.values)}")
        return next(iter(self.values.values()))

    def text(self, words: Callable[[Any], str]) -> str:
        if self.agreed:
            return words(self.verdict())
        grouped: dict[Hashable, list[str]] = {}
        for case, value in self.values.items():
            grouped.setdefault(value, []).append(case)
        parts = "; ".join(say("notebook: measured case", cases=", ".join(cases), verdict=words(value))
                          for value, cases in grouped.items())
        return say("notebook: measured depends", cases=parts)


@dataclass(frozen=True)
class Table:
    """Columns over rows; `measure()` runs every case once, `markdown()` renders what was measured."""

    first: str
    columns: Sequence[Column]
    rows: Sequence[Row]

    def measure(self) -> list[list[Cell]]:
        cells = []
        for row in self.rows:
            unknown = set(row.expect) - {c.title for c in self.columns}
            if unknown:
                raise TypeError(f"row {row.label!r} expects columns that do not exist: {sorted(unknown)}")
            line = []
            for column in self.columns:
                cell = Cell({name: column.measure(case) for name, case in row.cases.items()})
                if column.title in row.expect:
                    wanted = row.expect[column.title]
                    off = {name: v for name, v in cell.values.items() if v != wanted}
                    if off:
                        raise ClaimBroken(f"row {row.label!r}, column {column.title!r}: expected {wanted!r} "
                                          f"for every case, measured {off}")
                line.append(cell)
            cells.append(line)
        return cells

    def markdown(self) -> str:
        cells = self.measure()
        head = f"| {self.first} | " + " | ".join(c.title for c in self.columns) + " |"
        rule = "|---" * (len(self.columns) + 1) + "|"
        body = [f"| {row.label} | " + " | ".join(cell.text(col.words) for cell, col in zip(line, self.columns))
                + " |" for row, line in zip(self.rows, cells)]
        return "\n".join([head, rule, *body])

    def show(self) -> Any:
        from IPython.display import Markdown

        return Markdown(self.markdown())


# --- the measurements


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def saved_roles(output: torch.Tensor, inputs: Sequence[torch.Tensor]) -> tuple[tuple[str, str], ...]:
    """What `output.grad_fn` saved: (attribute, role) for every tensor among its `_saved_*` attributes, the
    role read by storage: `output`, `input` (`input i` of several), `a number` (a 0-d tensor of no input),
    or `other` (noise, statistics, an index of its own)."""
    node = output.grad_fn
    if node is None:
        return ()
    found = []
    for attr in sorted(a for a in dir(node) if a.startswith("_saved_")):
        value = getattr(node, attr)
        if not isinstance(value, torch.Tensor):
            continue
        ptr = _storage(value)
        role = "a number" if value.dim() == 0 else "other"
        if ptr == _storage(output):
            role = "output"
        else:
            for i, tensor in enumerate(inputs):
                if ptr == _storage(tensor):
                    role = "input" if len(inputs) == 1 else f"input {i}"
                    break
        found.append((attr.removeprefix("_saved_"), role))
    return tuple(found)


def kinds(roles: tuple[tuple[str, str], ...]) -> frozenset[str]:
    """The roles without their attributes and input numbers: {"input", "output", "other"}."""
    return frozenset("input" if r.startswith("input") else "other" if r == "a number" else r for _, r in roles)


def _backward(output: torch.Tensor) -> None:
    output.backward(torch.ones_like(output))


def classify(error: RuntimeError) -> Outcome:
    text = str(error)
    if INPLACE_ERROR.search(text):
        return Outcome.AT_BACKWARD
    if LEAF_INPLACE_ERROR.search(text):
        return Outcome.AT_BACKWARD_LEAF
    return Outcome.AT_BACKWARD_OTHER


@dataclass(frozen=True)
class Program:
    """A program with a write: `forward()` runs up to and including the write and returns what `backward`
    needs; `backward(state)` returns the gradient; `right()` the gradient the maths asks for (None: not
    compared)."""

    forward: Callable[[], Any]
    backward: Callable[[Any], Any]
    right: Callable[[], Any] | None = None


def _close(got: Any, want: Any) -> bool:
    if isinstance(got, torch.Tensor):
        return isinstance(want, torch.Tensor) and got.shape == want.shape and torch.allclose(got, want)
    return len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want))


def outcome(program: Program) -> Outcome:
    """Run `program` and say where it was refused, or, without an error, whether its gradient was right."""
    try:
        state = program.forward()
    except RuntimeError:
        return Outcome.AT_THE_WRITE
    try:
        got = program.backward(state)
    except RuntimeError as error:
        return classify(error)
    if program.right is None:
        return Outcome.NO_ERROR
    return Outcome.RIGHT if _close(got, program.right()) else Outcome.WRONG


def clause(step: Callable[[], Any]) -> str | None:
    """The op the error's clause names (`output 0 of Add` -> `Add`), or None: no clause, or no error."""
    try:
        step()
    except RuntimeError as error:
        said = re.search(r"which is output \d+ of ([\w:]+),", str(error))
        return re.sub(r"Backward\d*$", "", said[1].split("::")[-1]) if said else None
    return None


def version_moved(write: Callable[[torch.Tensor], Any], make: Callable[[], torch.Tensor] | None = None) -> int:
    """How far `write(t)` moved `t._version` (t: a fresh 2x3 tensor of zeros, or `make()`)."""
    t = torch.zeros(2, 3) if make is None else make()
    before = t._version
    write(t)
    return t._version - before


def step_moved(optimizer: Callable[..., torch.optim.Optimizer], **options: Any) -> int:
    """How far one `optimizer.step()` moved a used weight's `_version` (a Linear(2, 2), one backward)."""
    layer = nn.Linear(2, 2)
    opt = optimizer(layer.parameters(), lr=0.1, **options)
    layer(torch.randn(4, 2)).sum().backward()
    before = layer.weight._version
    opt.step()
    return layer.weight._version - before


# --- the op zoo: each op runs on inputs made by `make` (a fresh tensor that requires grad, not a leaf: a
# tensor of its own, or a view of a larger one), and returns (output, the inputs it was given).

Make = Callable[..., torch.Tensor]


def on_a_tensor(*shape: int, positive: bool = False) -> torch.Tensor:
    """A tensor that requires grad and is not a leaf: `a * 1`."""
    a = torch.rand(*shape).add(0.5) if positive else torch.randn(*shape)
    return a.requires_grad_() * 1


def on_a_view(*shape: int, positive: bool = False) -> torch.Tensor:
    """The same, as a view of a larger tensor (its first rows): what a slice, a chunk or `.t()` hands on."""
    return on_a_tensor(shape[0] + 2, *shape[1:], positive=positive)[1:-1]


MAKERS: dict[str, Make] = {"on a tensor": on_a_tensor, "on a view": on_a_view}


def _plain(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def _batch_norm(make: Make):
    a = make(3, 4)
    return nn.BatchNorm1d(4)(a), [a]


def _embedding(make: Make):
    i = torch.tensor([1, 2, 3])
    return nn.Embedding(10, 4)(i), [i]


def _gather(make: Make):
    a = make(3, 4)
    return a.gather(1, torch.tensor([[0, 1], [1, 2], [2, 3]])), [a]


def _masked_select(make: Make):
    a = make(3, 4)
    return a.masked_select(torch.arange(12).reshape(3, 4) % 2 == 0), [a]


def _pow_tensor(make: Make):
    a, b = make(3, 4, positive=True), make(3, 4)
    return a ** b, [a, b]


def _two(op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], second: Make | None = None):
    def run(make: Make):
        a = make(3, 4)
        b = make(3, 4) if second is None else second(3, 4)
        return op(a, b), [a, b]
    return run


def _one(op: Callable[[torch.Tensor], torch.Tensor], *shape: int, positive: bool = False):
    def run(make: Make):
        a = make(*(shape or (3, 4)), positive=positive)
        return op(a), [a]
    return run


def _matmul(make: Make):
    a, b = make(3, 4), make(4, 2)
    return a @ b, [a, b]


OPS: dict[str, Callable[[Make], tuple[torch.Tensor, list[torch.Tensor]]]] = {
    "relu(a)": _one(torch.relu),
    "sigmoid(a)": _one(torch.sigmoid),
    "tanh(a)": _one(torch.tanh),
    "exp(a)": _one(torch.exp),
    "sqrt(a)": _one(torch.sqrt, positive=True),
    "softmax(a, 1)": _one(lambda a: F.softmax(a, dim=1)),
    "log_softmax(a, 1)": _one(lambda a: F.log_softmax(a, dim=1)),
    "gelu(a)": _one(F.gelu),
    "silu(a)": _one(F.silu),
    "leaky_relu(a)": _one(F.leaky_relu),
    "log(a)": _one(torch.log, positive=True),
    "sin(a)": _one(torch.sin),
    "a.pow(2)": _one(lambda a: a.pow(2)),
    "a * b": _two(torch.mul),
    "a * c": _two(torch.mul, _plain),
    "a * 2": _one(lambda a: a * 2),
    "a + b": _two(torch.add),
    "a.sum()": _one(torch.sum),
    "a[1:], a.t()": _one(lambda a: a[1:]),
    "a @ b": _matmul,
    "batch_norm(a) (training)": _batch_norm,
    "layer_norm(a)": _one(lambda a: F.layer_norm(a, (4,))),
    "dropout(a) (training)": _one(lambda a: F.dropout(a, 0.5, training=True)),
    "embedding(i)": _embedding,
    "a.norm(dim=1)": _one(lambda a: a.norm(dim=1)),
    "logsumexp(a, 1)": _one(lambda a: torch.logsumexp(a, 1)),
    "a.prod(1)": _one(lambda a: a.prod(1)),
    "a.amax(1)": _one(lambda a: a.amax(1)),
    "a.max()": _one(lambda a: a.max()),
    "a ** b": _pow_tensor,
    "a.gather(1, i)": _gather,
    "a.masked_select(m)": _masked_select,
}
"""The ops the book speaks of, by how a line of code calls them (`c` needs no grad; `i` and `m` are an
index and a mask; the others need grad)."""


@dataclass(frozen=True)
class OpCase:
    """One op of the zoo, on inputs of one kind (`MAKERS`)."""

    op: str
    make: str

    def run(self) -> tuple[torch.Tensor, list[torch.Tensor]]:
        torch.manual_seed(0)
        return OPS[self.op](MAKERS[self.make])


def op_saves(case: OpCase) -> tuple[tuple[str, str], ...]:
    output, inputs = case.run()
    return saved_roles(output, inputs)


def op_saves_kinds(case: OpCase) -> frozenset[str]:
    return kinds(op_saves(case))


def _write_then_backward(case: OpCase, which: str) -> Outcome | None:
    """None where there is nothing to write: the op's first input is not a tensor of floats (indices)."""
    output, inputs = case.run()
    written = inputs[0] if which == "input" else output
    if not written.is_floating_point():
        return None

    def forward():
        output, inputs = case.run()
        with torch.no_grad():
            (inputs[0] if which == "input" else output).add_(1)
        return output

    return outcome(Program(forward, _backward))


def input_written(case: OpCase) -> Outcome | None:
    """The op's first input (`a`) written in place (bumping its counter) after it ran, then backward."""
    return _write_then_backward(case, "input")


def output_written(case: OpCase) -> Outcome | None:
    """The op's output written in place after it ran, then backward through it."""
    return _write_then_backward(case, "output")


def op_cases(*ops: str) -> dict[str, OpCase]:
    """Every declared case of a row about `ops`: each op, on a tensor and on a view of one."""
    unknown = [op for op in ops if op not in OPS]
    if unknown:
        raise TypeError(f"not in the op zoo: {unknown}")
    return {f"`{op}` {make}": OpCase(op, make) for op in ops for make in MAKERS}
