"""The locator: who changed a tensor that autograd saved, found with PyTorch's public hooks.

Two mechanisms, both public PyTorch:
- a `TorchFunctionMode` sees every torch call the user's code makes (methods, functions, `+=`, indexing,
  `out=`, the optimizers' `_foreach_*`), reads the version counters of its tensor arguments before and
  after, and logs each call that advanced one: the op, the user's frames, the version after it. Any
  write that bumps the counter is seen, whatever its schema says, including writes through a view or a
  `detach()` (they share the counter and the storage, which is the key writes are filed under).
- `saved_tensors_hooks` record, for each tensor autograd saves, its version, the op being called and the
  user's frames. With hooks installed PyTorch skips its own version check, so the unpack hook does it,
  and raises PyTorch's own wording plus the culprit: the first logged write after the save.

Writes are only logged for storages that some live saved tensor uses, so most calls cost a version read.
"""

from __future__ import annotations

import functools
import itertools
import re
import sys
from collections.abc import Callable
from contextlib import ContextDecorator
from typing import Any, Literal

import torch
from torch.autograd.graph import saved_tensors_hooks
from torch.overrides import TorchFunctionMode, resolve_name

from ...core.messages import INPLACE_ERROR
from ...feedback.wording import say
from .frames import Raw, UserFrames, sites
from .report import Operation, Report, TensorInfo

ANSWER_FILE = "<answer>"
"""The file name the grader compiles answer code under (autograder/harness.py)."""

PREFIX = INPLACE_ERROR.pattern
"""How PyTorch's message begins (the pattern is a plain phrase), for the message the locator writes."""

_next_seq = getattr(getattr(torch._C, "_autograd", None), "_get_sequence_nr", None)
_current_node = getattr(torch._C, "_current_autograd_node", None)
_MAX_WRITES = 4096
SAVER_CHAIN = 3
"""User frames kept for each saved tensor (a save is frequent; a write, which keeps the whole chain, is rare)."""


def inplace_error(message: str, report: Report) -> RuntimeError:
    """PyTorch's in-place error as the locator raises it: a plain RuntimeError (so code and graders that
    match the type name and the wording keep working), with the report attached (`report_of`)."""
    error = RuntimeError(message)
    error.blame_report = report  # type: ignore[attr-defined]  # an attribute RuntimeError does not declare; report_of reads it
    return error


def report_of(error: BaseException) -> Report | None:
    """The report attached to an in-place error raised under the locator, or None."""
    report = getattr(error, "blame_report", None)
    return report if isinstance(report, Report) else None


class _Write:
    __slots__ = ("seq", "version", "op", "chain", "grad_mode")

    def __init__(self, seq: int, version: int, op: Any, chain: tuple[Raw, ...], grad_mode: bool) -> None:
        self.seq, self.version, self.op, self.chain, self.grad_mode = seq, version, op, chain, grad_mode


class _Log:
    """Per storage: the saved tensors alive on it (by pack number), and the writes since."""

    __slots__ = ("packs", "writes")

    def __init__(self) -> None:
        self.packs: set[int] = set()
        self.writes: list[_Write] = []


class _Packed:
    """What a pack hook returns: the tensor (detached if it is an output of the saving node, which would
    otherwise make a reference cycle through the graph) and who saved it at which version."""

    __slots__ = ("tensor", "key", "seq", "version", "op", "chain", "grad_fn_name", "output_nr", "is_output",
                 "locator", "__weakref__")
    tensor: torch.Tensor
    key: int
    seq: int
    version: int
    op: Any
    chain: tuple[Raw, ...]
    grad_fn_name: str | None
    output_nr: int
    is_output: bool
    locator: Locator

    def __del__(self) -> None:
        try:
            self.locator._release(self.key, self.seq)
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown; nothing to release into
            pass


class _WriteMode(TorchFunctionMode):
    """Logs each torch call that advanced the version counter of one of its tensor arguments."""

    def __init__(self, locator: Locator) -> None:
        super().__init__()
        self.locator = locator

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        tensors = _tensors(args, kwargs)
        before = _versions(tensors)
        loc = self.locator
        caller = sys._getframe(1)
        outer = loc._op, loc._frame, loc._saver
        loc._op, loc._frame, loc._saver = func, caller, None  # the packs inside this call share one capture
        try:
            result = func(*args, **kwargs)
        finally:
            loc._op, loc._frame, loc._saver = outer
        if tensors and loc._logs:
            for t, v in zip(tensors, before):
                if v is not None and t._version != v:
                    loc._wrote(func, t, caller)
        return result


class Locator(ContextDecorator):
    """`with Locator():` around forward *and* backward. In-place errors then name their culprit.

    `user` picks the frames reported (see `UserFrames`): None for everything outside torch, the standard
    library, site-packages and this package; a file name such as "<answer>"; or a predicate.
    `outermost`: a code object whose frame, and all frames outside it, are never reported.
    """

    def __init__(self, user: str | Callable[[str], bool] | None = None, *, outermost: Any = None) -> None:
        self.frames = UserFrames(user, outermost=outermost)
        self.reports: list[Report] = []
        self._logs: dict[int, _Log] = {}
        self._seq = itertools.count()
        self._op: Any = None
        self._frame: Any = None
        self._saver: tuple[Raw, ...] | None = None
        self._last_save: dict[tuple[str, int], int] = {}
        self._mode = _WriteMode(self)
        self._hooks = saved_tensors_hooks(self._pack, self._unpack)
        self._active = False
        _node_style()  # probe PyTorch's wording now, not inside a backward

    @property
    def report(self) -> Report | None:
        """The first in-place error found, or None."""
        return self.reports[0] if self.reports else None

    def __enter__(self) -> Locator:
        if self._active:
            raise RuntimeError("this Locator is already active; use a new one (locate()) for a nested block")
        self._active = True
        self._hooks.__enter__()
        try:
            self._mode.__enter__()
        except BaseException:
            self._hooks.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        self._active = False
        try:
            self._mode.__exit__(*exc)
        finally:
            self._hooks.__exit__(*exc)
        return False

    # -- hooks ---------------------------------------------------------------------------------------
    def _pack(self, t: torch.Tensor) -> Any:
        try:
            version = t._version
            key = _key(t)
        except RuntimeError:  # an inference tensor: no counter; PyTorch itself will complain
            return t
        p = _Packed()
        p.locator, p.key, p.version = self, key, version
        p.seq = next(self._seq)
        if self._frame is not None:  # inside a torch call: its caller's frames, captured once per call
            if self._saver is None:
                self._saver = self.frames.capture(self._frame, SAVER_CHAIN)
            p.chain, p.op = self._saver, self._op
        else:  # a custom autograd.Function's save_for_backward
            p.chain = self.frames.capture(sys._getframe(1), SAVER_CHAIN)
            p.op = _function_apply(sys._getframe(1))
        if p.chain:
            self._last_save[p.chain[0][:2]] = p.seq
        gf = t.grad_fn
        p.is_output = gf is not None and _next_seq is not None and gf._sequence_nr() == _next_seq() - 1
        p.grad_fn_name = gf.name() if p.is_output and gf is not None else None
        forward_cls = getattr(gf, "_forward_cls", None)
        if p.op is None and p.is_output and isinstance(forward_cls, type):
            # torch 2.14 packs a custom Function's saved output once its apply has returned: no `apply` frame is
            # left to read, but the output's node names its Function
            p.op = f"{forward_cls.__name__}.apply"
        p.output_nr = t.output_nr
        # without the sequence number an output cannot be told apart: detach all (no cycle, a terser message)
        p.tensor = t if _next_seq is not None and not p.is_output else t.detach()
        log = self._logs.get(key)
        if log is None:
            log = self._logs[key] = _Log()
        log.packs.add(p.seq)
        return p

    def _unpack(self, p: Any) -> torch.Tensor:
        if type(p) is not _Packed:
            return p
        found = p.tensor._version
        if found == p.version:
            return p.tensor
        report = self._report(p, found)
        self.reports.append(report)
        raise inplace_error(report.torch_message + " " + report.summary() + "\n\n" + report.text(), report)

    # -- bookkeeping ---------------------------------------------------------------------------------
    def _wrote(self, func: Any, t: torch.Tensor, frame: Any) -> None:
        log = self._logs.get(_key(t))
        if log is None:
            return  # no saved tensor lives on this storage: nothing this write could break
        # grad mode tells a write under no_grad from the same write without it (the workshop's misconceptions)
        log.writes.append(_Write(next(self._seq), t._version, func, self.frames.capture(frame),
                                 torch.is_grad_enabled()))
        if len(log.writes) > 256 and log.packs:
            oldest = min(log.packs)
            log.writes = [w for w in log.writes if w.seq > oldest][:_MAX_WRITES]

    def _release(self, key: int, seq: int) -> None:
        log = self._logs.get(key)
        if log is not None:
            log.packs.discard(seq)
            if not log.packs:
                del self._logs[key]

    def _report(self, p: _Packed, found: int) -> Report:
        log = self._logs.get(p.key)
        writes = [w for w in (log.writes if log else ()) if w.seq > p.seq and p.version < w.version <= found]
        mods = tuple(Operation(op_name(w.op), sites(w.chain), w.version, w.grad_mode) for w in writes)
        t = p.tensor
        node = _current_node() if _current_node is not None else None
        grad_fn = p.grad_fn_name if p.is_output else (t.grad_fn.name() if t.grad_fn is not None else None)
        which = f", which is output {p.output_nr} of {_node_style()(grad_fn)}," if grad_fn else ""
        message = (f"{PREFIX}: [{_type_name(t)} {list(t.shape)}]{which} is at version {found}; "
                   f"expected version {p.version} instead.")
        again = bool(p.chain) and self._last_save.get(p.chain[0][:2], -1) > p.seq
        return Report(saved_by=Operation(op_name(p.op), sites(p.chain)),
                      tensor=TensorInfo(tuple(t.shape), str(t.dtype).removeprefix("torch."), p.version, found),
                      modifications=mods, backward_node=node.name() if node is not None else None,
                      torch_message=message, saved_as=_role(p), line_ran_again=again)


def _role(p: _Packed) -> str | None:
    if _next_seq is None:
        return None  # without sequence numbers an output cannot be told from an input
    return "output" if p.is_output else "input"


def locate(user: str | Callable[[str], bool] | None = None) -> Locator:
    """A context manager (and decorator) that names the culprit of in-place errors raised inside it."""
    return Locator(user)


def explain(fn: Callable[..., Any], *args: Any, user: str | Callable[[str], bool] | None = None,
            suggest: bool = True, **kwargs: Any) -> Report | None:
    """For notebooks: run `fn(*args, **kwargs)` (forward and backward) and print who broke autograd: the line that
    modified the saved tensor and the line that saved it, and, unless `suggest=False` (a "diagnose" step, before
    the learner writes the fix), the suggested rewrite of the culprit (suggest.py).

    Returns the report (IPython displays it) instead of raising the in-place error; any other error
    propagates. Returns None when nothing was modified.
    """
    loc = Locator(user)
    try:
        with loc:
            fn(*args, **kwargs)
    except RuntimeError as e:
        report = report_of(e)
        if report is None:
            raise
        _show(report, suggest)
        return report
    if loc.report is not None:  # fn caught the error itself; still say what happened
        _show(loc.report, suggest)
    return loc.report


def _show(report: Report, with_fix: bool) -> None:
    """The report, then the suggested rewrite (read from the cell's source, which linecache holds)."""
    print(report.text())
    if not with_fix:
        return
    from ..suggest.suggest import suggest  # libcst: loaded for a report, never by a worker that only locates

    suggestion = suggest(report.to_json())
    if suggestion is not None:
        print("\n" + suggestion.text(status=say("blame: not verified, nothing ran")))


def culprit_for(fn: Callable[[], Any], filename: str | Callable[[str], bool] | None = ANSWER_FILE) -> dict | None:
    """For the grader: run `fn()` under the locator; the JSON report (book/reference/blame.md) of the first
    in-place error, as a dict, or None.

    Frames are those of `filename` (the answer code). The in-place error is absorbed (its report is the
    answer); any other exception from `fn` propagates unchanged.
    """
    loc = Locator(filename)
    try:
        with loc:
            fn()
    except RuntimeError as e:
        if report_of(e) is None:
            raise
    return loc.report.to_json() if loc.report else None


# -- helpers -------------------------------------------------------------------------------------------
def _tensors(args: tuple, kwargs: dict) -> list[torch.Tensor]:
    found = []
    for group in (args, kwargs.values()):
        for a in group:
            if isinstance(a, torch.Tensor):
                found.append(a)
            elif isinstance(a, (list, tuple)):  # _foreach_* ops, torch.cat(out=...), optimizers
                found.extend(x for x in a if isinstance(x, torch.Tensor))
    return found


def _versions(tensors: list[torch.Tensor]) -> list[int | None]:
    try:
        return [t._version for t in tensors]
    except RuntimeError:  # inference tensors have no counter
        return [_version_or_none(t) for t in tensors]


def _version_or_none(t: torch.Tensor) -> int | None:
    try:
        return t._version
    except RuntimeError:
        return None


def _key(t: torch.Tensor) -> int:
    """The storage a tensor writes into: shared by its views and by `detach()`."""
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # sparse and other storage-less layouts
        return id(t)


def _function_apply(frame: Any) -> str | None:
    """The name of a custom `autograd.Function` whose `save_for_backward` is packing (no torch call is)."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "apply" and code.co_filename.endswith(("function.py",)):
            cls = frame.f_locals.get("cls")
            if isinstance(cls, type):
                return f"{cls.__name__}.apply"
        frame = frame.f_back
    return None


@functools.lru_cache(maxsize=4096)
def _op_name_cached(func: Any) -> str:
    name = resolve_name(func)
    if name:
        return name
    qual = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    qual = qual.removeprefix("_VariableFunctionsClass.")  # torch._foreach_add_ and other torch.* builtins
    module = getattr(func, "__module__", None) or ""
    if module.startswith("torch._C") or not module:
        module = "torch"
    return f"{module}.{qual}"


def op_name(func: Any) -> str | None:
    """A readable name for a torch callable: torch.relu, torch.Tensor.add_, torch.nn.functional.dropout."""
    if func is None or isinstance(func, str):
        return func
    try:
        return _op_name_cached(func)
    except TypeError:  # unhashable callable
        return getattr(func, "__name__", repr(func))


_LEGACY = {torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.int64: "Long",
           torch.int32: "Int", torch.int16: "Short", torch.int8: "Char", torch.uint8: "Byte", torch.bool: "Bool"}


def _type_name(t: torch.Tensor) -> str:
    """The tensor's type as PyTorch's message prints it: torch.FloatTensor, CPUBFloat16Type, ..."""
    if t.dtype in _LEGACY and t.device.type in ("cpu", "cuda"):
        return t.type()
    scalar = {torch.bfloat16: "BFloat16", torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble"}
    return f"{t.device.type.upper()}{scalar.get(t.dtype, str(t.dtype).removeprefix('torch.'))}Type"


@functools.lru_cache(maxsize=1)
def _node_style() -> Callable[[str], str]:
    """How this PyTorch names the saving node in its message: `Relu` (2.13) or `ReluBackward0` (older)."""
    x = torch.ones(1, requires_grad=True)
    try:
        y = x.exp()
        y.add_(1)
        y.sum().backward()
    except RuntimeError as e:
        if "of ExpBackward0" in str(e):
            return lambda name: name
    return lambda name: re.sub(r"Backward\d*$", "", name)
