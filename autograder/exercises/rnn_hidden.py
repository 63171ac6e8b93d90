"""The exercise rnn_hidden: carrying an RNN's hidden state across training steps (seed 003).

The carried state still holds the previous chunk's graph. With `retain_graph=True` the next backward
walks into that graph, whose saved weights `optimizer.step()` has since changed in place, so it raises.
The fix is truncated BPTT: carry the state on detached. The grader watches the state passed into each
chunk (a forward pre-hook) and the size of each chunk's graph (walked from the loss), so it can tell
"carried without history" from "reset" or "history kept", whatever code does it. The losses must come
back as Python floats, as the signature says: a list of loss tensors keeps every chunk's graph alive. One
hidden scenario cuts a batch-first sequence into chunks of unequal lengths drawn per salt, each a transposed
view (not contiguous), as a data loader's last chunk is shorter. Nothing counts until training runs and the
losses are right (the gate).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .. import probes
from ..core import checks
from ..core.evidence import Evidence
from ..core.messages import INPLACE_ERROR
from ..core.spec import PASS, Check, Exercise, ExpectedError, Family, Rule, Scenario, Symbol, Verdict
from ..feedback.wording import exercise_say
from . import _contract as contract

LR, MOMENTUM = 0.1, 0.9
"""The optimizer every trial trains with: SGD with momentum, built by the grader, the same for the
student and the reference. Momentum makes a skipped `zero_grad` or `step` show in the weights."""

KINDS: dict[str, Callable[..., nn.RNNBase]] = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}
"""Each kind, made from (input size, hidden size, layers)."""

# What a training run writes, besides "model calls", "returned" and "inputs unchanged":
STATE_INTO = Family("state into chunk")
"""The state passed into each call of the model, per part (_state_into), or why it is not a tensor."""
STATE_OUT = Family("state out of chunk")
"""The final state each call of the model produced, per part (_state_out)."""
HISTORY_INTO = Family("history into chunk")
"""Per call of the model: whether the state passed in has a history (a grad_fn)."""
GRAPH_SIZE = Family("graph size")
"""Per call of loss_fn: how many operations backward from that loss runs through (graph_size)."""
LOSS = Family("loss")
"""The losses `train_tbptt` returned, one per chunk (`loss 1`); LOSS_CALLS is one of its keys too, so comparing
the family with the reference's compares first how many times loss_fn ran."""
LOSS_CALLS = LOSS.key("calls")
"""How many times loss_fn ran."""
WEIGHT = Family("weight")
"""Each parameter after training (`weight weight_ih_l0`)."""
GRAD_AT_ENTRY = Family("grad at entry")
"""Inputs: what each parameter's `.grad` holds when `train_tbptt` is called (`grad at entry weight_ih_l0`), left
by the caller's own backward: the contract says to zero the gradients before each chunk, so it must not count."""

TRAINING_WRITES = ("model calls", STATE_INTO, STATE_OUT, HISTORY_INTO, LOSS_CALLS, GRAPH_SIZE, "returned", LOSS,
                   WEIGHT, "inputs unchanged")


def _state_into(chunk: int, part: str) -> str:
    """The STATE_INTO key of the state's `part` ("h" or "c") passed into chunk `chunk`."""
    return STATE_INTO.key(f"{chunk}: {part}")


def _state_out(chunk: int, part: str) -> str:
    """The STATE_OUT key of the `part` ("h" or "c") of chunk `chunk`'s final state."""
    return STATE_OUT.key(f"{chunk}: {part}")


def graph_size(loss: torch.Tensor) -> int:
    """How many operations backward from `loss` runs through: grows per chunk if history is kept.

    Leaves (AccumulateGrad nodes) are not counted: a carried state made a leaf that requires grad
    (`state.detach().requires_grad_()`) has no history either, and costs nothing more per chunk.
    """
    seen: set[Any] = set()
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return sum(type(node).__name__ != "AccumulateGrad" for node in seen)


def _parts(state: Any) -> dict[str, Any]:
    """The tensors of a state by name: "h" (RNN, GRU) or "h" and "c" (LSTM)."""
    if isinstance(state, torch.Tensor):
        return {"h": state}
    if isinstance(state, (tuple, list)):
        return dict(zip(("h", "c"), state))
    return {}


def _drawer(kind: str, layers: int, n_chunks: int, length: int | tuple[int, int] = 5, batch: int = 2, size: int = 3,
            hidden: int = 4, target_scale: float = 0.5, grads_at_entry: bool = False):
    """length (low, high): each chunk's length drawn per salt; the sequence is then drawn batch-first, whole
    (`x`, `y`), and cut by the scenario (`lengths`). target_scale: the size of the targets (large ones make
    gradients large enough that a clipping to a usual max_norm would act); grads_at_entry: the parameters arrive
    with gradients in `.grad` (GRAD_AT_ENTRY)."""

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        def randn(*shape, scale=1.0):
            return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)

        if isinstance(length, int):
            lengths = ""
            x, y = randn(n_chunks, length, batch, size), randn(n_chunks, length, batch, hidden, scale=target_scale)
        else:
            cuts = torch.randint(length[0], length[1] + 1, (n_chunks,), generator=g).tolist()
            lengths = ",".join(map(str, cuts))
            x, y = randn(batch, sum(cuts), size), randn(batch, sum(cuts), hidden, scale=target_scale)
        inputs = {
            "size": size,
            "hidden": hidden,
            "layers": layers,
            "lengths": lengths,
            "x": x,
            "y": y,
            "h0": randn(layers, batch, hidden, scale=0.5),
            **probes.draw_state(KINDS[kind](size, hidden, layers), g, dtype),
        }
        if kind == "lstm":
            inputs["c0"] = randn(layers, batch, hidden, scale=0.5)
        if grads_at_entry:
            for key, t in probes.draw_state(KINDS[kind](size, hidden, layers), g, dtype).items():
                inputs[GRAD_AT_ENTRY.key(probes.STATE.member(key))] = t * 10
        return inputs

    return draw


def _trainer(kind: str):
    def run(ns, inputs, device, obs):
        dtype = inputs["x"].dtype
        model = probes.build(KINDS[kind], (inputs["size"], inputs["hidden"], inputs["layers"]), inputs, device, dtype)
        for name, p in model.named_parameters():  # the caller's own backward left these, if any
            entry = inputs.get(GRAD_AT_ENTRY.key(name))
            p.grad = None if entry is None else entry.to(device).clone()
        optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
        chunks, targets = _chunks(inputs, "x"), _chunks(inputs, "y")
        state0 = (inputs["h0"], inputs["c0"]) if kind == "lstm" else inputs["h0"]
        originals = [t.clone() for t in (*chunks, *targets, *_parts(state0).values())]
        obs["model calls"] = 0

        def watch_state(module, args, kwargs):
            """Records the state passed into each call of the model, and whether it has a history."""
            obs["model calls"] += 1
            call = obs["model calls"]
            state = args[1] if len(args) > 1 else kwargs.get("hx")
            parts = _parts(state)
            if not parts:
                obs[_state_into(call, "h")] = (
                    "is missing: the model was called without one, so it started from zeros"
                    if state is None else exercise_say("is a {type}, not a tensor or a tuple of tensors",
                                                       type=type(state).__name__)
                )
            history = False
            for name, t in parts.items():
                if isinstance(t, torch.Tensor):
                    obs[_state_into(call, name)] = t.detach().clone()  # before anyone changes it
                    history = history or t.grad_fn is not None
                else:
                    obs[_state_into(call, name)] = exercise_say("is a {type}, not a tensor", type=type(t).__name__)
            obs[HISTORY_INTO.key(call)] = history

        def watch_result(module, args, result):
            """Records the final state each call of the model produced, to compare with the next one's."""
            for name, t in _parts(result[1]).items():
                obs[_state_out(obs["model calls"], name)] = t.detach().clone()

        def loss_fn(output, target):
            loss = F.mse_loss(output, target)
            obs[LOSS_CALLS] = obs.get(LOSS_CALLS, 0) + 1
            obs[GRAPH_SIZE.key(obs[LOSS_CALLS])] = graph_size(loss)
            return loss

        model.register_forward_pre_hook(watch_state, with_kwargs=True)
        model.register_forward_hook(watch_result)
        attempted = True
        try:
            losses = ns["train_tbptt"](model, chunks, targets, state0, optimizer, loss_fn)
            obs["returned"] = _problem_with(losses, len(chunks))
            if isinstance(losses, (list, tuple)):
                for i, v in enumerate(losses):
                    if isinstance(v, (float, int)) or (isinstance(v, torch.Tensor) and v.numel() == 1):
                        obs[LOSS.key(i + 1)] = float(v.detach() if isinstance(v, torch.Tensor) else v)
            for name, p in model.named_parameters():
                obs[WEIGHT.key(name)] = p.detach().clone()
        except NotImplementedError:
            attempted = False  # the TODO: nothing to give credit for
            raise
        finally:
            if attempted:  # even if it raised later: a crash must not hide a change to the caller's tensors
                now = [*chunks, *targets, *_parts(state0).values()]
                obs["inputs unchanged"] = len(now) == len(originals) and all(
                    isinstance(t, torch.Tensor) and t.shape == o.shape and torch.equal(t.detach(), o)
                    for t, o in zip(now, originals)
                )

    return run


def _chunks(inputs: dict[str, Any], key: str) -> list[torch.Tensor]:
    """The caller's chunks: [length, batch, *] tensors, each its own copy. Where `lengths` is given, the cuts of
    a batch-first sequence, each a transposed copy (not contiguous: clone keeps the strides)."""
    if not inputs["lengths"]:
        return [t.clone() for t in inputs[key]]
    cuts = [int(n) for n in inputs["lengths"].split(",")]
    return [t.clone() for t in inputs[key].transpose(0, 1).split(cuts)]


def _problem_with(losses: Any, n: int) -> str:
    """Why `losses` is not a list of `n` Python floats; "" when it is."""
    if not isinstance(losses, (list, tuple)):
        return exercise_say("`train_tbptt` returned {type}, not a list of floats (one loss per chunk)",
                            type=type(losses).__name__)
    if len(losses) != n:
        return exercise_say("`train_tbptt` returned {count} losses for {n} chunks; return one per chunk",
                            count=len(losses), n=n)
    for v in losses:
        if isinstance(v, torch.Tensor):
            why = (" A loss tensor still holds its chunk's graph, so keeping one per chunk keeps every graph "
                   "alive (memory grows with the number of chunks)." if v.grad_fn is not None else "")
            return exercise_say("`train_tbptt` returned a list of tensors; return Python floats (`loss.item()`).{why}",
                                why=why)
        if not isinstance(v, float):
            return exercise_say("`train_tbptt` returned a list holding a {type}; return Python floats (`loss.item()`)",
                                type=type(v).__name__)
    return ""


def _losses_match(scenarios: tuple[str, ...]) -> Rule:
    """The function returned a list of floats, and they are the reference's losses."""
    same = checks.matches_reference((LOSS,), "Loss per chunk", scenarios)

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            if "returned" not in pair.got.values:
                return checks.missing(ev, pair, "returned", "What `train_tbptt` returned")
            if pair.got.values["returned"]:
                return checks.failed(exercise_say("{returned} (in {trial}).", returned=pair.got.values["returned"],
                                                  trial=pair.label),
                                     "`train_tbptt` did not return a list of Python floats, one loss per chunk "
                                     "(`loss.item()`)")
        return same(ev)

    return Rule(evaluate, scenarios, ("returned", LOSS))


def _truncated(ev: Evidence) -> Verdict:
    """No state passed in has a history, and the graph per chunk stops growing after the first.

    Chunk 1 may be smaller than the rest: it starts from `state0`, while later chunks may start from a
    state made a leaf that requires grad, which adds operations but no history.
    """
    for pair in ev.pairs():
        got, n = pair.got.values, pair.want.values[LOSS_CALLS]
        sizes = [got.get(GRAPH_SIZE.key(i)) for i in range(1, n + 1)]
        for i in range(1, n + 1):
            if got.get(HISTORY_INTO.key(i)):
                why = ("the caller's graph. Start from `state0` itself." if i == 1 else
                       "earlier chunks. Carry the state on without its history (truncated BPTT).")
                chunk = exercise_say("chunk 1") if i == 1 else exercise_say("a later chunk")
                return checks.failed(exercise_say("The state passed into chunk {i} still has a history (a grad_fn), "
                                                  "in {trial}: backward from this chunk's loss runs back into {why}",
                                                  i=i, trial=pair.label, why=why),
                                     exercise_say("The state passed into {chunk} still has a history (a grad_fn): "
                                                  "backward from that chunk's loss runs back into {why}",
                                                  chunk=chunk, why=why))
            if i > 2 and None not in sizes[1:i] and sizes[i - 1] != sizes[1]:
                return checks.failed(exercise_say("Backward from the loss of chunk {i} runs through {size} operations, "
                                                  "from chunk 2's through {second}: the cost per chunk grows, because "
                                                  "something links each chunk's graph to the previous ones, in "
                                                  "{trial}.", i=i, size=sizes[i - 1], second=sizes[1],
                                                  trial=pair.label),
                                     "Backward from the loss of a later chunk runs through more operations than "
                                     "from chunk 2's: the cost per chunk grows, because something links each "
                                     "chunk's graph to the previous ones")
        if None in sizes:
            return checks.missing(ev, pair, GRAPH_SIZE.key(sizes.index(None) + 1), "The size of a chunk's graph")
    return PASS


def _carries_state(ev: Evidence) -> Verdict:
    """The state passed into chunk 1 is `state0`, and into chunk k the final state of chunk k - 1.

    A property of the student's own run, not a comparison with the reference, so that a wrong
    optimizer step (which changes every later state) does not count against carrying the state.
    """
    for pair in ev.pairs():
        got, want = pair.got.values, pair.want.values
        calls = got.get("model calls", 0)
        if calls == 0 and pair.got.error is None:
            said = "call `model(chunk, state)` (not `model.forward`), so the grader can watch the state."
            return checks.failed(exercise_say("`model(...)` was never called, in {trial}: {said}", trial=pair.label,
                                              said=said),
                                 exercise_say("`model(...)` was never called: {said}", said=said))
        if calls > want["model calls"]:
            return checks.failed(exercise_say("The model was called {calls} times for {chunks} chunks, in {trial}: "
                                              "call it once per chunk, from the carried state.", calls=calls,
                                              chunks=want["model calls"], trial=pair.label),
                                 "The model was called more times than there are chunks: call it once per chunk, "
                                 "from the carried state.")
        tol = checks.tolerance(pair.trial.dtype, pair.trial.device)
        for k in range(1, want["model calls"] + 1):
            for name in ("h", "c"):
                key = _state_into(k, name)
                if key not in want:
                    continue
                chunk = exercise_say("chunk 1") if k == 1 else exercise_say("a later chunk")
                if key not in got:
                    return checks.missing(ev, pair, key, exercise_say("The state passed into {chunk}", chunk=chunk))
                if isinstance(got[key], str):
                    said = "Call `model(chunk, state)` with the state carried from the chunk before."
                    return checks.failed(exercise_say("The state for chunk {k} {got}, in {trial}. {said}", k=k,
                                                      got=got[key], trial=pair.label, said=said),
                                         exercise_say("The state passed into {chunk} is missing or not a tensor (nor "
                                                      "a tuple of tensors). {said}", chunk=chunk, said=said))
                if k == 1:
                    expected, what = pair.inputs[f"{name}0"], f"`state0` ({name})"
                else:
                    expected = got.get(_state_out(k - 1, name))
                    what = exercise_say("the final {name} of chunk {k}", name=name, k=k - 1)
                    if expected is None:
                        return checks.missing(ev, pair, _state_out(k - 1, name), "The final state of a chunk")
                problem = checks.mismatch(got[key], expected, tol)
                if problem:
                    said = "Carry the state on from chunk to chunk; do not reset it."
                    hidden_what = "`state0`" if k == 1 else "the final state of the chunk before"
                    return checks.failed(exercise_say("The state passed into chunk {k} should be {what}, but its "
                                                      "{name} {problem}, in {trial}. {said}", k=k, what=what,
                                                      name=name, problem=problem, trial=pair.label, said=said),
                                         exercise_say("The state passed into {chunk} should be {what}, but its "
                                                      "{name} is not. {said}", chunk=chunk, what=hidden_what,
                                                      name=name, said=said))
    return PASS


PUBLIC, PUBLIC_LSTM, RNN, GRU, LSTM = "public", "public lstm", "rnn", "gru", "lstm"
UNEQUAL = "chunks of unequal lengths"
DIRTY = "gradients at entry, large targets"
TENSOR_STATE = (PUBLIC, RNN, GRU, UNEQUAL)
TUPLE_STATE = (PUBLIC_LSTM, LSTM)
HIDDEN = (RNN, GRU, LSTM, UNEQUAL, DIRTY)
RUNS = checks.completes(TENSOR_STATE, "Training")
LOSSES = _losses_match(TENSOR_STATE)
NEEDS = "training must first run and return the right losses (the checks `runs` and `losses`)"

EXERCISE = Exercise(
    id="rnn_hidden",
    preload=("torch._dynamo", "torch.fx.experimental.symbolic_shapes"),  # its trials step an optimizer
    number=7,
    title="The carried hidden state",
    defines=(Symbol("train_tbptt", "function", ("model", "chunks", "targets", "state0", "optimizer", "loss_fn")),),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _drawer("gru", layers=1, n_chunks=3, length=4, hidden=3), _trainer("gru"), TRAINING_WRITES,
                 public=True),
        Scenario(PUBLIC_LSTM, _drawer("lstm", layers=1, n_chunks=3, length=4, hidden=3), _trainer("lstm"),
                 TRAINING_WRITES, public=True),
        Scenario(RNN, _drawer("rnn", layers=1, n_chunks=5), _trainer("rnn"), TRAINING_WRITES),
        Scenario(GRU, _drawer("gru", layers=2, n_chunks=4), _trainer("gru"), TRAINING_WRITES),
        Scenario(LSTM, _drawer("lstm", layers=2, n_chunks=5), _trainer("lstm"), TRAINING_WRITES),
        Scenario(UNEQUAL, _drawer("gru", layers=1, n_chunks=4, length=(2, 7)), _trainer("gru"), TRAINING_WRITES),
        Scenario(DIRTY, _drawer("lstm", layers=1, n_chunks=4, target_scale=20.0, grads_at_entry=True),
                 _trainer("lstm"), TRAINING_WRITES),
    ),
    checks=checks.gate_checks(
        checks.all_of(RUNS, LOSSES), NEEDS,
        Check("runs", 1, "Training runs through every chunk of an nn.RNN and an nn.GRU (chunks of any length "
              "and layout).", RUNS, public=True),
        Check("losses", 2, "Returns a list of Python floats, one loss per chunk, equal to the reference's.", LOSSES,
              public=True),
        Check("lstm", 1, "Works on nn.LSTM, whose state is a tuple (h, c): it runs and returns the right losses.",
              checks.all_of(checks.completes(TUPLE_STATE, "Training an nn.LSTM"), _losses_match(TUPLE_STATE)),
              public=True),
        Check("final weights", 2, "After training, every parameter equals the reference's (zero_grad, "
              "backward and step once per chunk, in that order), for nn.RNN, nn.GRU and nn.LSTM, also when the "
              "parameters arrive with gradients of the caller's in `.grad`, and on targets large enough that "
              "any clipping of the gradients would change the step (the task asks for none).",
              checks.matches_reference((WEIGHT,), "Parameter after training", HIDDEN)),
        Check("truncated", 2, "The state passed into each chunk has no history, and the graph behind each chunk's "
              "loss keeps the same size (truncated BPTT: the cost per chunk does not grow).",
              Rule(_truncated, (PUBLIC, PUBLIC_LSTM, RNN, GRU, LSTM), (LOSS_CALLS, GRAPH_SIZE, HISTORY_INTO)),
              public=True),
        Check("carries state", 1, "The state passed into chunk 1 is `state0`, and into every later chunk the "
              "final state of the chunk before (carried on, not reset).",
              Rule(_carries_state, None, ("model calls", STATE_INTO, STATE_OUT)), public=True),
        Check("caller's tensors unchanged", 1, "`chunks`, `targets` and `state0` are not modified.",
              checks.holds("inputs unchanged", (PUBLIC, PUBLIC_LSTM, *HIDDEN),
                           "Your function changed the caller's `chunks`, `targets` or `state0` in place"),
              public=True),
    ),
)

CONTRACT = contract.Contract("train_tbptt", (
    contract.Dimension(contract.GRADS_AT_ENTRY, ("none", "non-zero"), "for each chunk: 1. zero the gradients"),
    contract.Dimension(contract.GRAD_NORM, ("at most 1", "above 1"),
                       "backward and one optimizer step (no clipping: the steps listed are all there is)"),
    contract.Dimension(contract.OPTIMIZER, ("SGD",), "the grader builds the optimizer (SGD with momentum)"),
    contract.Dimension(contract.LAYOUT, ("contiguous", "not contiguous"), "chunks of any length and layout"),
    contract.Dimension(contract.DTYPE, ("float32", "float64"), "float32 and float64"),
    contract.Dimension(contract.MODE, ("train",), "the model arrives in training mode"),
))
"""The situations the notebook lets `train_tbptt` meet (tests/test_contracts_spanned.py measures them)."""
