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


class WriteOutcome(enum.Enum):
    """What a program with an in-place write did, from the write to the gradient."""

    AT_THE_WRITE = "write"
    AT_BACKWARD = "backward"
    AT_BACKWARD_LEAF = "backward_leaf"
    AT_BACKWARD_OTHER = "backward_other"
    RIGHT = "right"
    WRONG = "wrong"
    NO_ERROR = "none"

    def words(self) -> str:
        return say(f"notebook: measured {self.value}")


def words_of(value: Any) -> str:
    """A measured value as a reader sees it: an WriteOutcome in the catalogue's words, a set of roles listed, a
    number or a name as it is."""
    if isinstance(value, WriteOutcome):
        return value.words()
    if isinstance(value, frozenset):
        return ", ".join(sorted(str(v) for v in value)) or "-"
    if isinstance(value, tuple):
        return ", ".join(f"`{attr}`: {role}" for attr, role in value) or "nothing"
    if value is None:
        return "-"
    return f"`{value}`" if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class Measure:
    """One measured property: `measure(case)` gives a hashable value; `words(value)` what the cell says."""

    title: str
    measure: Callable[[Any], Hashable]
    words: Callable[[Any], str] = words_of


@dataclass(frozen=True)
class Claim:
    """A claim: `label` (what the reader reads in the first column) over `cases` (name -> what each column
    measures), and optionally what each column is expected to measure for every case (`expect`, by title)."""

    label: str
    cases: Mapping[str, Any]
    expect: Mapping[str, Hashable] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.cases:
            raise TypeError(f"row {self.label!r} declares no case")


@dataclass(frozen=True)
class MeasuredCell:
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
    columns: Sequence[Measure]
    rows: Sequence[Claim]

    def measure(self) -> list[list[MeasuredCell]]:
        cells = []
        for row in self.rows:
            unknown = set(row.expect) - {c.title for c in self.columns}
            if unknown:
                raise TypeError(f"row {row.label!r} expects columns that do not exist: {sorted(unknown)}")
            line = []
            for column in self.columns:
                cell = MeasuredCell({name: column.measure(case) for name, case in row.cases.items()})
                if column.title in row.expect:
                    wanted = row.expect[column.title]
                    off = {name: v for name, v in cell.values.items() if v != wanted}
                    if off:
                        raise ClaimBroken(f"row {row.label!r}, column {column.title!r}: expected {wanted!r} "
                                          f"for every case, measured {off}")
                line.append(cell)
            cells.append(line)
        return cells

    def outcomes(self) -> dict[str, dict[str, dict[str, Hashable]]]:
        """What was measured, as values: row label -> column title -> case -> value. A page asserts on these, the
        same in every language, never on the words `markdown()` shows (the course's, in the reader's language)."""
        return {row.label: {column.title: dict(cell.values) for column, cell in zip(self.columns, line)}
                for row, line in zip(self.rows, self.measure())}

    def split_rows(self) -> list[str]:
        """The rows where a column's cases measured differently (the table says "depends" there)."""
        return [label for label, columns in self.outcomes().items()
                if any(len(set(values.values())) > 1 for values in columns.values())]

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


def classify(error: RuntimeError) -> WriteOutcome:
    text = str(error)
    if INPLACE_ERROR.search(text):
        return WriteOutcome.AT_BACKWARD
    if LEAF_INPLACE_ERROR.search(text):
        return WriteOutcome.AT_BACKWARD_LEAF
    return WriteOutcome.AT_BACKWARD_OTHER


@dataclass(frozen=True)
class WriteProgram:
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


def outcome(program: WriteProgram) -> WriteOutcome:
    """Run `program` and say where it was refused, or, without an error, whether its gradient was right."""
    try:
        state = program.forward()
    except RuntimeError:
        return WriteOutcome.AT_THE_WRITE
    try:
        got = program.backward(state)
    except RuntimeError as error:
        return classify(error)
    if program.right is None:
        return WriteOutcome.NO_ERROR
    return WriteOutcome.RIGHT if _close(got, program.right()) else WriteOutcome.WRONG


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
    "batch_norm(a)": _batch_norm,
    "layer_norm(a)": _one(lambda a: F.layer_norm(a, (4,))),
    "dropout(a)": _one(lambda a: F.dropout(a, 0.5, training=True)),
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
index and a mask; the others need grad; batch_norm and dropout in training mode)."""


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


def _write_then_backward(case: OpCase, which: str) -> WriteOutcome | None:
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

    return outcome(WriteProgram(forward, _backward))


def input_written(case: OpCase) -> WriteOutcome | None:
    """The op's first input (`a`) written in place (bumping its counter) after it ran, then backward."""
    return _write_then_backward(case, "input")


def output_written(case: OpCase) -> WriteOutcome | None:
    """The op's output written in place after it ran, then backward through it."""
    return _write_then_backward(case, "output")


def op_cases(*ops: str) -> dict[str, OpCase]:
    """Every declared case of a row about `ops`: each op, on a tensor and on a view of one."""
    unknown = [op for op in ops if op not in OPS]
    if unknown:
        raise TypeError(f"not in the op zoo: {unknown}")
    return {f"`{op}` {make}": OpCase(op, make) for op in ops for make in MAKERS}


# --- programs the book's tables run: each a WriteProgram whose `right` is the gradient of what it computed (the
# same program with its write made visible, out of place, or left out where it changes no value backward uses)

X = (0.5, 1.0)


def _x() -> torch.Tensor:
    return torch.tensor(X, requires_grad=True)


def _grad_of_sum(state: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor | None:
    leaf, result = state
    result.sum().backward()
    return leaf.grad


def saving(kind: str) -> Any:
    """A context that saves tensors one way: `none`, `identity` hooks, `save_on_cpu`, `save_on_cpu pinned`,
    `clone` (pack keeps a copy)."""
    from contextlib import nullcontext

    from torch.autograd.graph import save_on_cpu, saved_tensors_hooks

    makers: dict[str, Callable[[], Any]] = {
        "none": nullcontext, "identity": lambda: saved_tensors_hooks(lambda t: t, lambda t: t),
        "save_on_cpu": save_on_cpu, "save_on_cpu_pinned": lambda: save_on_cpu(pin_memory=True),
        "clone": lambda: saved_tensors_hooks(torch.clone, lambda t: t)}
    return makers[kind]()


def exp_written(write: Callable[[torch.Tensor], Any], kind: str = "none") -> WriteProgram:
    """`s = a.exp()` saved one way (`saving(kind)`), `write(s)` adding 1 to it, then backward through exp."""
    def forward():
        a = _x()
        with saving(kind):
            s = a.exp()
        write(s)
        return a, s
    return WriteProgram(forward, _grad_of_sum, lambda: torch.tensor(X).exp())


def numpy_write(increment: bool) -> WriteProgram:
    """`y = x * w`, with `w` (needs no grad, so saved) written through `w.numpy()`; then, if `increment`,
    `torch.autograd.graph.increment_version(w)`."""
    def forward():
        x, w = _x(), torch.tensor([1.0, 2.0])
        y = x * w
        w.numpy()[:] = 10.0
        if increment:
            torch.autograd.graph.increment_version(w)
        return x, y
    return WriteProgram(forward, _grad_of_sum, lambda: torch.tensor([1.0, 2.0]))


def no_grad_write_unsaved() -> WriteProgram:
    """`y = x * 2`, then `y *= 3` under no_grad: y's own write, which nobody saved, is not in the graph."""
    def forward():
        x = _x()
        y = x * 2
        with torch.no_grad():
            y *= 3
        return x, y
    return WriteProgram(forward, _grad_of_sum, lambda: torch.full((2,), 6.0))


class KeptOnContext(torch.autograd.Function):
    """Keeps `b` as `ctx.b`, not with save_for_backward: no version is recorded for it."""

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        ctx.b = b
        return a * b

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:  # type: ignore[override]
        return grad * ctx.b, None


def kept_on_context() -> WriteProgram:
    def forward():
        a, b = _x(), torch.ones(2)
        y = KeptOnContext.apply(a, b)
        b.mul_(10)
        return a, y
    return WriteProgram(forward, _grad_of_sum, lambda: torch.ones(2))


class ScaleInPlace(torch.autograd.Function):
    """Multiplies its input by 3 in place; tells autograd (`mark_dirty`) only when asked."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, dirty: bool) -> torch.Tensor:  # type: ignore[override]
        x.mul_(3.0)
        if dirty:
            ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:  # type: ignore[override]
        return grad * 3.0, None


def custom_in_place(dirty: bool) -> WriteProgram:
    """`h = a * 1`, `ScaleInPlace.apply(h)`, then the program goes on with `h`, as an in-place op invites."""
    def forward():
        a = _x()
        h = a * 1
        ScaleInPlace.apply(h, dirty)
        return a, h
    return WriteProgram(forward, _grad_of_sum, lambda: torch.full((2,), 3.0))


def hook_writes_its_argument() -> WriteProgram:
    """`q.register_hook(lambda g: g.mul_(10))` on one branch of `(p + q) * 2`: the gradient is shared."""
    def forward():
        x, w = _x(), torch.ones(2, requires_grad=True)
        p, q = x * 1, w * 1
        q.register_hook(lambda grad: grad.mul_(10))
        return x, (p + q) * 2
    return WriteProgram(forward, _grad_of_sum, lambda: torch.full((2,), 2.0))


def unscale_saved_gradient() -> WriteProgram:
    """A gradient penalty's graph saves g; `GradScaler.unscale_` then divides g in place, its version unmoved."""
    def run(written: bool):
        torch.manual_seed(0)
        layer = nn.Linear(2, 1)
        scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
        (g,) = torch.autograd.grad(scaler.scale(layer(torch.ones(1, 2)).pow(2).sum()), layer.weight,
                                   create_graph=True)
        penalty = g.pow(2).sum()
        if written:
            layer.weight.grad = g
            scaler.unscale_(optimizer)
        return layer, penalty

    def bias_grad(state):
        return torch.autograd.grad(state[1], state[0].bias)[0]
    return WriteProgram(lambda: run(True), bias_grad, lambda: bias_grad(run(False)))


def step_between(optimizer: str, **options: Any) -> WriteProgram:
    """An optimizer step between a forward that saved the weight and its backward (chapter 8's GAN, small)."""
    def build():
        torch.manual_seed(0)
        layer = nn.Linear(2, 2)
        x = torch.randn(3, 2, requires_grad=True)
        return layer, x, layer(x).pow(2).sum()

    def forward():
        layer, x, loss = build()
        opt = getattr(torch.optim, optimizer)(layer.parameters(), lr=0.1, **options)
        for p in layer.parameters():
            p.grad = torch.ones_like(p)
        opt.step()
        return x, loss

    def right():
        _, x, loss = build()
        return torch.autograd.grad(loss, x)[0]
    return WriteProgram(forward, lambda s: torch.autograd.grad(s[1], s[0])[0], right)


def _saved_then_written(t: torch.Tensor) -> torch.Tensor:
    s = t.sigmoid()
    s.mul_(2)
    return s


def _written_then_more(t: torch.Tensor) -> torch.Tensor:
    s = t.sigmoid()
    s.mul_(2)
    return s.exp()


def _writes_its_input(t: torch.Tensor) -> torch.Tensor:
    t.mul_(2)
    return t.exp()


CHECKPOINTED: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], Callable[[torch.Tensor], torch.Tensor]]] = {
    "write_saved": (_saved_then_written, lambda t: t.sigmoid() * 2),
    "write_saved_then_op": (_written_then_more, lambda t: (t.sigmoid() * 2).exp()),
    "write_input": (_writes_its_input, lambda t: (t * 2).exp()),
}
"""Functions a checkpoint runs, each beside the same maths written out of place (what `right` computes)."""


def checkpointed(fn: str, *, reentrant: bool, early_stop: bool = True) -> WriteProgram:
    """`checkpoint(CHECKPOINTED[fn], a * 1)`, then backward, with checkpoint's early stop on or off."""
    import warnings

    from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop

    body, maths = CHECKPOINTED[fn]

    def forward():
        a = _x()
        with set_checkpoint_early_stop(early_stop), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return a, checkpoint(body, a * 1, use_reentrant=reentrant)

    def backward(state):
        with set_checkpoint_early_stop(early_stop), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _grad_of_sum(state)

    def right():
        a = _x()
        return torch.autograd.grad(maths(a * 1).sum(), a)[0]
    return WriteProgram(forward, backward, right)


def checkpoint_then_written(which: str) -> WriteProgram:
    """`out = checkpoint(torch.exp, h, use_reentrant=False)`; then `out.mul_(2)` (`output`) or `h.add_(1)`
    (`input`); then backward."""
    from torch.utils.checkpoint import checkpoint

    def forward():
        a = _x()
        h = a * 1
        out = checkpoint(torch.exp, h, use_reentrant=False)
        (out.mul_(2) if which == "output" else h.add_(1))
        return a, out
    return WriteProgram(forward, _grad_of_sum, lambda: 2 * torch.tensor(X).exp())


def at_the_write(write: Callable[[], Any]) -> WriteProgram:
    """Only the write: refused there, or not at all."""
    return WriteProgram(write, lambda made: None)


def multi_output_view_written(split: str) -> WriteProgram:
    """One of the views `chunk`, `split` or `unbind` returns, written in place while autograd records."""
    def write():
        h = torch.ones(2, 2, requires_grad=True) * 1
        views = {"chunk": lambda: h.chunk(2), "split": lambda: h.split(1), "unbind": lambda: h.unbind()}[split]()
        views[0].mul_(2)
    return at_the_write(write)


def hooked_in_place_activation() -> WriteProgram:
    """`nn.ReLU(inplace=True)` after a Linear that has a full backward hook."""
    def write():
        model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(inplace=True))
        model[0].register_full_backward_hook(lambda *hook_args: None)
        model(torch.randn(1, 2))
    return at_the_write(write)
