"""Runs a script and records what it computes: what `autograder blame --fix` compares (verify.py).

    python -m autograder.blame.fix.gradients --mode MODE --out FILE [--float64] [--out-of-place FILE:LINE:OP ...]
        [--source PATH=TEXTFILE ...] [--show FOLDER] SCRIPT [ARGS...]

Before each call of `torch.autograd.backward` (so `loss.backward()` too) it records the values of the tensors
the pass starts from (the loss: the forward values the gradients are made of); after it, the `.grad` of every
leaf tensor seen so far, and which leaves that pass reached (found by walking the graph from the roots:
parameters, inputs with `requires_grad`; with `inputs=`, only those of them the pass accumulates into).
Before each optimizer step (a global step pre-hook: every `torch.optim` optimizer) it records the `.grad` of
each parameter of that optimizer: what the step uses. At the end, the values of every leaf (so a different
update shows). Modes:

- `plain`: the program as written, under the locator (a remaining in-place error names its culprit).
- `reference`: every tensor autograd saves is cloned as it is saved, so no later write reaches it: each op's
  backward sees its inputs as they were when it ran, while the forward computes what the program computed
  (PyTorch's `allow_mutation_on_saved_tensors` promises the same). With `--out-of-place FILE:LINE:OP` (one or
  more), each culprit call (op OP called from that line) is also made out of place, so that its caller gets a
  new tensor and any other name for the old one keeps the old values: the program with the culprits made out
  of place.
- `truncated`: `reference`, and each backward stops where the graph built before the previous backward
  begins (no gradient flows into it): the maths of detaching a state carried from one step to the next.

`--source PATH=TEXTFILE` runs the file PATH (the script or a module it imports) from the text in TEXTFILE,
under PATH's name; `--show FOLDER` makes the working folder (a scratch folder) show FOLDER's files and keeps
every write in it (scratch.py). The run is seeded (random, numpy, torch: 0) and single-threaded, so two runs
draw the same numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import random
import sys
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.autograd.graph import saved_tensors_hooks
from torch.optim.optimizer import register_optimizer_step_pre_hook
from torch.overrides import TorchFunctionMode

from ...feedback.wording import say
from ..locator.frames import UserFrames
from ..locator.locator import PREFIX, Locator, op_name, report_of
from .scratch import Overrides, ScratchFolder

MAX_BACKWARDS = 8
"""Backward passes recorded; later ones are counted, not recorded."""

MAX_STEPS = 8
"""Steps recorded for each optimizer; later ones are counted, not recorded."""


class Recorder:
    """Wraps `torch.autograd.backward`: leaves found from the roots, their gradients after each call, the
    leaves each call reached; and, before each optimizer step, the gradients of that optimizer's parameters."""

    def __init__(self, truncate: bool) -> None:
        self.leaves: list[torch.Tensor] = []
        self._known: dict[int, int] = {}
        self.backwards: list[list[torch.Tensor | None]] = []
        self.roots: list[list[torch.Tensor | None]] = []
        self.reached: list[list[int]] = []
        self.steps: list[dict[str, Any]] = []
        self.step_counts: dict[tuple[int, ...], int] = {}
        self.count = 0
        self.truncate = truncate
        self._boundary: int | None = None
        self._sequence: Callable[[], int] | None = getattr(getattr(torch._C, "_autograd", None),
                                                           "_get_sequence_nr", None)
        if truncate and self._sequence is None:
            raise RuntimeError(say("blame: no sequence numbers"))

    def wrap(self, backward: Any) -> Any:
        signature = inspect.signature(backward)

        def recorded(tensors: Any, *args: Any, **kwargs: Any) -> Any:
            roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
            nodes, reached = self._walk(roots)
            inputs = _inputs(signature, tensors, args, kwargs)
            if inputs is not None:  # the pass accumulates into these alone
                reached = [i for i in reached if id(self.leaves[i]) in inputs]
            hooks = self._truncate(nodes)
            if len(self.roots) < MAX_BACKWARDS:
                self.roots.append([_float64(r) if isinstance(r, torch.Tensor) else None for r in roots])
            try:
                return backward(tensors, *args, **kwargs)
            finally:
                for h in hooks:
                    h.remove()
                self.count += 1
                if len(self.backwards) < MAX_BACKWARDS:
                    self.backwards.append([_float64(leaf.grad) for leaf in self.leaves])
                    self.reached.append(reached)
        return recorded

    def step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        """A global optimizer step pre-hook: the gradients the step is about to use."""
        params = [p for group in optimizer.param_groups for p in group["params"]]
        key = tuple(self._register(p) for p in params)
        self.step_counts[key] = self.step_counts.get(key, 0) + 1
        if self.step_counts[key] <= MAX_STEPS:
            self.steps.append({"params": list(key), "grads": [_float64(p.grad) for p in params]})

    def _walk(self, roots: list[torch.Tensor]) -> tuple[list[Any], list[int]]:
        """Every node reachable from the roots, and the leaves reached; registers them in the order first reached."""
        stack = [r.grad_fn for r in reversed(roots) if isinstance(r, torch.Tensor) and r.grad_fn is not None]
        reached = [self._register(r) for r in roots
                   if isinstance(r, torch.Tensor) and r.requires_grad and r.grad_fn is None]
        seen: dict[int, Any] = {}
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen[id(node)] = node
            variable = getattr(node, "variable", None)
            if isinstance(variable, torch.Tensor):
                reached.append(self._register(variable))
                continue
            stack.extend(n for n, _ in reversed(node.next_functions) if n is not None)
        return list(seen.values()), sorted(set(reached))

    def _register(self, leaf: torch.Tensor) -> int:
        """The leaf's index, given in the order first seen."""
        if id(leaf) not in self._known:
            self._known[id(leaf)] = len(self.leaves)
            self.leaves.append(leaf)  # kept alive: ids stay unique
        return self._known[id(leaf)]

    def _truncate(self, nodes: list[Any]) -> list[Any]:
        """For `truncated`: zero the gradient entering any node made before the previous backward began."""
        if not self.truncate:
            return []
        assert self._sequence is not None  # __init__ refuses `truncate` without it
        boundary, self._boundary = self._boundary, self._sequence()
        if boundary is None:
            return []
        old = [n for n in nodes if not hasattr(n, "variable") and n._sequence_nr() < boundary]
        return [n.register_prehook(_zeros) for n in old]

    def result(self, status: int, error: BaseException | None, float64: bool) -> dict[str, Any]:
        report = report_of(error) if error is not None else None
        return {"status": status, "count": self.count, "roots": self.roots, "backwards": self.backwards,
                "reached": self.reached,
                "steps": self.steps, "step_counts": [[list(key), n] for key, n in self.step_counts.items()],
                "shapes": [tuple(leaf.shape) for leaf in self.leaves],
                "final": [_float64(leaf) for leaf in self.leaves], "float64": float64,
                "error": None if error is None else {
                    "type": type(error).__name__, "message": str(error).strip().split("\n")[0][:500],
                    "inplace": PREFIX in str(error), "report": report.to_json() if report else None}}


class Copies(TorchFunctionMode):
    """Counts the values `clone()` copies before the first backward pass: what one forward copies (a rewrite's
    cost, --fix's measure of the smallest repair)."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder, self.values = recorder, 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.Tensor.clone and self.recorder.count == 0 and isinstance(out, torch.Tensor):
            self.values += out.numel()
        return out


class OutOfPlace(TorchFunctionMode):
    """Each culprit op, when called from its culprit's line, runs out of place: `add_` as `add`, and
    `inplace=True` as `inplace=False`. Its caller gets the new tensor (`h += x` then rebinds `h`)."""

    def __init__(self, sites: list[tuple[str, int, str]]) -> None:
        super().__init__()
        self.sites = {(os.path.realpath(file), line): op for file, line, op in sites}
        self.ops = set(self.sites.values())
        self.frames = UserFrames()
        self._real: dict[str, str] = {}
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = op_name(func)
        if name in self.ops:
            here = self.frames.capture(sys._getframe(1), 1)
            site = (self._realpath(here[0][0]), here[0][1]) if here else None
            twin = _out_of_place(func, args, kwargs) if self.sites.get(site) == name else None
            if twin is not None:
                self.count += 1
                func, args, kwargs = twin
        return func(*args, **kwargs)

    def _realpath(self, file: str) -> str:
        if file not in self._real:
            self._real[file] = os.path.realpath(file) if not file.startswith("<") else file
        return self._real[file]


def _out_of_place(func: Any, args: tuple, kwargs: dict) -> tuple[Any, tuple, dict] | None:
    name = getattr(func, "__name__", "")
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):  # builtins without a signature: methods such as Tensor.add_
        bound = None
    if bound is not None and bound.arguments.get("inplace") is True:
        bound.arguments["inplace"] = False
        return func, bound.args, bound.kwargs
    if name.endswith("_") and not name.startswith("_"):
        owner = torch.Tensor if args and isinstance(args[0], torch.Tensor) and hasattr(torch.Tensor, name) else torch
        twin = getattr(owner, name[:-1], None)
        return (twin, args, kwargs) if twin is not None else None
    return None


def _inputs(signature: inspect.Signature, tensors: Any, args: tuple, kwargs: dict) -> set[int] | None:
    """The ids of the tensors in a backward call's `inputs=`; None when it is not given, or holds anything but
    tensors (a `GradientEdge`), or the call does not bind: then every leaf the pass reaches counts as reached."""
    try:
        value = signature.bind(tensors, *args, **kwargs).arguments.get("inputs")
    except TypeError:  # the call itself raises it, in torch's words
        return None
    if value is None:
        return None
    values = [value] if isinstance(value, torch.Tensor) else list(value.values() if isinstance(value, dict) else value)
    return {id(v) for v in values} if all(isinstance(v, torch.Tensor) for v in values) else None


def _zeros(grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(None if g is None else torch.zeros_like(g) for g in grad_outputs)


def _float64(t: torch.Tensor | None) -> torch.Tensor | None:
    if t is None:
        return None
    t = t.detach()
    if t.is_sparse:
        t = t.to_dense()
    if t.is_complex():
        return t.to("cpu", copy=True)
    return t.to("cpu", torch.float64, copy=True)


def _clone(t: torch.Tensor) -> torch.Tensor:
    return t.clone()


def _same(t: torch.Tensor) -> torch.Tensor:
    return t


def run(path: str, argv: list[str], mode: str, float64: bool, out_of_place: Sequence[str] = (),
        sources: dict[str, str] | None = None, show: str | None = None) -> dict[str, Any]:
    """Runs `path` as `__main__` in this process and returns what it recorded."""
    if float64:
        torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    random.seed(0)
    torch.manual_seed(0)
    with contextlib.suppress(ImportError):
        import numpy

        numpy.random.seed(0)
    context: Any = Locator() if mode == "plain" else saved_tensors_hooks(_clone, _same)  # the locator probes: first
    culprit = None
    if out_of_place:
        culprit = OutOfPlace([(file, int(line), op) for file, line, op in (s.rsplit(":", 2) for s in out_of_place)])
    recorder = Recorder(truncate=mode == "truncated")
    copies = Copies(recorder) if mode == "plain" else None
    overrides = Overrides(sources or {})
    sys.meta_path.insert(0, overrides)
    if show is not None:  # from here on, every write Python makes stays in the scratch folder
        temporary = tuple(filter(None, [os.environ.get("TMPDIR")]))  # runs.py gives each run its own
        scratch = ScratchFolder(os.getcwd(), show, also=temporary)
        scratch.guard_torch_writers()
        sys.addaudithook(scratch.hook)
    original = torch.autograd.backward
    torch.autograd.backward = recorder.wrap(original)
    step_hook = register_optimizer_step_pre_hook(recorder.step)
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    status, error = 0, None
    try:
        with contextlib.redirect_stdout(sys.stderr), context, culprit or contextlib.nullcontext(), \
                copies or contextlib.nullcontext():
            overrides.run_main(path)
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException as e:  # noqa: BLE001 - the program's error is part of what it did
        status, error = 1, e
    finally:
        torch.autograd.backward = original
        step_hook.remove()
    result = recorder.result(status, error, float64)
    result["out_of_place_calls"] = culprit.count if culprit else None
    result["copied"] = copies.values if copies else None
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m autograder.blame.fix.gradients", description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=("plain", "reference", "truncated"), required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--float64", action="store_true", help="make float64 the default dtype")
    p.add_argument("--out-of-place", metavar="FILE:LINE:OP", action="append", default=[],
                   help="with reference: a culprit call made out of place")
    p.add_argument("--source", metavar="PATH=TEXTFILE", action="append", default=[],
                   help="run the file PATH from the text in TEXTFILE")
    p.add_argument("--show", metavar="FOLDER", help="the working folder is a scratch folder showing FOLDER")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    sources = {}
    for pair in args.source:
        path, text_file = pair.rsplit("=", 1)
        with open(text_file, encoding="utf-8") as f:
            sources[path] = f.read()
    with open(args.out, "wb") as out:  # opened before the scratch folder keeps writes in
        torch.save(run(args.script, list(args.args), args.mode, args.float64, args.out_of_place, sources,
                       args.show), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
