"""The exercise sliced_input: writing predicted label tokens into a slice of the input between two passes (seed 002).

The first pass saves the input: embedding keeps the token indices, `mul` keeps the mask. Writing
`tokens[:, -3:]` and `mask[:, -3:]` in place before backward changes both, so backward raises. The
fix must build new tensors for the second pass, with the same encoder (the seed's fix also swapped
in a second encoder, which changes the model), and leave the caller's tensors as they were. Hidden batch
sizes and lengths are drawn per salt, and one hidden scenario hands the model strided (not contiguous) tokens
and mask (laid out column by column, as the transpose of a sequence-first batch). Nothing counts until both
passes are right and backward runs.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .. import finite_differences, probes
from ..core import checks
from ..core.evidence import Evidence, GraderError
from ..core.messages import INPLACE_ERROR
from ..core.spec import PASS, Check, Exercise, ExpectedError, Rule, Scenario, Symbol, Verdict
from ..feedback.wording import exercise_say
from ..probes import GRAD, STATE
from . import _contract as contract

LABEL_LEN = 3
"""How many trailing positions the predicted label's tokens replace."""

ARGMAX_MARGIN = 0.05
"""Smallest gap drawn between the best and second-best first-pass logit (float64). The worst trial
tolerance (float32 with TF32 on CUDA, logits of size ~1) moves a logit by ~5e-3 and gradcheck's eps
by ~1e-6: with a 10x larger gap, every correct fix predicts the reference's labels."""

MAX_DRAWS = 200


class TwoStageClassifierLayout(nn.Module):
    """The model's parameters and its label_tokens buffer, and no forward: the shapes the grader draws a
    state for. The reference (references/sliced_input.py, never installed) adds the two passes."""

    def __init__(self, vocab_size: int, dim: int, num_a: int, num_b: int, label_tokens: torch.Tensor):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.fc_a = nn.Linear(dim, num_a)
        self.fc_b = nn.Linear(dim, num_b)
        self.register_buffer("label_tokens", label_tokens)


def _first_pass(state: dict[str, torch.Tensor], tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """logits_a, as the exercise's own first pass computes it (masked mean of the embeddings, then fc_a),
    from a drawn state: what the drawer needs to keep a clear-cut prediction."""
    pooled = (F.embedding(tokens, state["embed.weight"]) * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
    return F.linear(pooled, state["fc_a.weight"], state["fc_a.bias"])


def _sizes(inputs: dict[str, Any]) -> tuple[int, int, int, int]:
    return inputs["vocab_size"], inputs["dim"], inputs["num_a"], inputs["num_b"]


def _drawer(vocab: int, dim: int, num_a: int, num_b: int, batch: int | tuple[int, int],
            length: int | tuple[int, int], strided: bool = False):
    """Tokens, a padding mask, label tokens and a state whose first-pass argmax is clear-cut and varied. A batch
    size or length given as (low, high) is drawn per salt; `strided`: the scenario lays tokens and mask out
    column by column (as the transpose of a [length, batch] tensor), so that they are not contiguous."""

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        batch_, length_ = (n if isinstance(n, int) else int(torch.randint(n[0], n[1] + 1, (), generator=g))
                           for n in (batch, length))
        return {**_draw(g, dtype, batch_, length_), "strided": strided}

    def _draw(g: torch.Generator, dtype: torch.dtype, batch: int, length: int) -> dict[str, Any]:
        for _ in range(MAX_DRAWS):
            labels = torch.randperm(vocab, generator=g)[: num_a * LABEL_LEN].view(num_a, LABEL_LEN)
            state = probes.draw_state(TwoStageClassifierLayout(vocab, dim, num_a, num_b, labels), g, torch.float64)
            # Unit-scale embeddings and first head, small bias: the prediction depends on the tokens,
            # so rows predict different labels (with draw_state's 1/sqrt(fan_in) the bias would decide).
            state[STATE.key("embed.weight")] = torch.randn(vocab, dim, generator=g, dtype=torch.float64)
            state[STATE.key("fc_a.weight")] = torch.randn(num_a, dim, generator=g, dtype=torch.float64)
            state[STATE.key("fc_a.bias")] = 0.1 * torch.randn(num_a, generator=g, dtype=torch.float64)
            tokens = torch.randint(0, vocab, (batch, length), generator=g)
            mask = (torch.rand(batch, length, generator=g, dtype=torch.float64) < 0.7).to(dtype)
            mask[:, 0] = 1  # every row has a token to pool in the first pass
            mask[0, -1] = 0  # a padded label slot, so that forgetting `mask[:, -3:] = 1` shows
            logits_a = _first_pass(STATE.members(state), tokens, mask.double())
            top, predicted = logits_a.topk(2, dim=1).values, logits_a.argmax(1)
            clear = bool((top[:, 0] - top[:, 1] > ARGMAX_MARGIN).all())
            if clear and (batch == 1 or predicted.unique().numel() > 1):
                break
        else:
            raise GraderError("could not draw inputs with a clear first-pass prediction")
        return {
            "vocab_size": vocab, "dim": dim, "num_a": num_a, "num_b": num_b,
            "label_tokens": labels,
            "tokens": tokens,
            "mask": mask,
            "grad_a": torch.randn(batch, num_a, generator=g, dtype=torch.float64).to(dtype),
            "grad_b": torch.randn(batch, num_b, generator=g, dtype=torch.float64).to(dtype),
            **{k: v.to(dtype) for k, v in state.items() if v.is_floating_point()},
        }

    return draw


def _build(ns, inputs: dict[str, Any], device: torch.device) -> nn.Module:
    """The student's class with the drawn parameters loaded, by name (the structure check judges names)."""
    dtype = inputs["mask"].dtype  # the trial's dtype
    model = ns["TwoStageClassifier"](*_sizes(inputs), inputs["label_tokens"])
    model = model.to(device=device, dtype=dtype)
    own = model.state_dict()
    model.load_state_dict({k: v for k, v in STATE.members(inputs).items() if k in own}, strict=False)
    return model


STRUCTURE = ("parameters", "buffers", "submodules")
"""Observations: the model's parameters, buffers and submodules, by name and shape (or type)."""


def _observe_structure(obs: dict[str, Any], model: nn.Module) -> None:
    obs["parameters"] = ", ".join(f"{n} {tuple(p.shape)}" for n, p in model.named_parameters())
    obs["buffers"] = ", ".join(f"{n} {tuple(b.shape)} {str(b.dtype).removeprefix('torch.')}"
                               for n, b in model.named_buffers())
    obs["submodules"] = ", ".join(f"{n}: {type(m).__name__}" for n, m in model.named_children())


def _call(model: nn.Module, tokens: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    out = model(tokens, mask)
    if not (isinstance(out, (tuple, list)) and len(out) == 2 and all(isinstance(o, torch.Tensor) for o in out)):
        raise TypeError(f"forward should return a tuple (logits_a, logits_b) of two tensors, "
                        f"but it returned {type(out).__name__}")
    return out[0], out[1]


def _given(inputs: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """The caller's tokens and mask: laid out column by column (not contiguous) where the scenario is strided."""
    if inputs["strided"]:
        return inputs["tokens"].t().contiguous().t(), inputs["mask"].t().contiguous().t()
    return inputs["tokens"], inputs["mask"]


def _forward_backward(ns, inputs, device, obs):
    model = _build(ns, inputs, device)
    tokens, mask = _given(inputs)
    tokens_before, mask_before = tokens.clone(), mask.clone()

    def unchanged() -> None:
        obs["tokens unchanged"] = torch.equal(tokens, tokens_before)
        obs["mask unchanged"] = torch.equal(mask, mask_before)

    logits_a, logits_b = _call(model, tokens, mask)
    obs["logits_a"], obs["logits_b"] = logits_a, logits_b
    unchanged()
    _observe_structure(obs, model)  # after a forward pass: a module made inside forward shows up
    loss = (logits_a * inputs["grad_a"]).sum() + (logits_b * inputs["grad_b"]).sum()
    loss.backward()
    probes.observe_grads(obs, model)
    unchanged()
    _observe_structure(obs, model)


FORWARD_BACKWARD_WRITES = ("logits_a", "logits_b", "tokens unchanged", "mask unchanged", *STRUCTURE, GRAD)


def _gradcheck(ns, inputs, device, obs):
    model = _build(ns, inputs, device)
    names = ("embed.weight", "fc_a.weight", "fc_b.weight")
    weights = dict(model.named_parameters())
    tokens, mask = _given(inputs)

    def fn(*ws):
        # fresh copies each call, so the gradients are judged here, not the caller's tensors
        return torch.func.functional_call(model, dict(zip(names, ws)), (tokens.clone(), mask.clone()))

    params = tuple(weights[n].detach().clone().requires_grad_(True) for n in names)
    finite_differences.observe(obs, fn, params)


_ENCODER = ("Both passes must use the same `embed`: a second encoder, or a copy of `embed`, has weights of "
            "its own, so the two passes no longer train one `embed`.")
_WHY = {
    "parameters": _ENCODER,
    "submodules": _ENCODER,
    "buffers": "Register `label_tokens` with `self.register_buffer`, so that it is part of the model's state "
               "and moves with it (`.to(device)`).",
}


def _structure(ev: Evidence) -> Verdict:
    """Exactly the spec's parameters, buffer and submodules, the same as the reference's."""
    for pair, key in ev.observations():
        got = pair.got.values.get(key)
        if got is None:
            return checks.missing(ev, pair, key)
        if got != pair.want.values[key]:
            return checks.failed(exercise_say("Your model's {key} are [{got}], but the exercise asks for exactly "
                                              "[{want}] (in {trial}). {why}", key=key, got=got,
                                              want=pair.want.values[key], trial=pair.label, why=_WHY[key]),
                                 exercise_say("Your model's {key} are not exactly those the exercise asks for. {why}",
                                              key=key, why=_WHY[key]))
    return PASS


PUBLIC, HIDDEN, SINGLE, GRADCHECK = "public", "hidden", "batch of one", "gradcheck"
STRIDED = "tokens and mask not contiguous"
F64 = (torch.float64,)
FORWARD = (PUBLIC, HIDDEN, SINGLE, STRIDED)
PASSES = checks.all_of(
    checks.matches_reference(("logits_a",), "First pass", FORWARD),
    checks.matches_reference(("logits_b",), "Second pass (last 3 tokens replaced by "
                             "label_tokens[logits_a.argmax(1)], their mask set to 1)", FORWARD))
BACKWARD = checks.completes(FORWARD, "Backward")
NEEDS = "both passes must first be right and backward run (the checks `forward` and `backward runs`)"

EXERCISE = Exercise(
    id="sliced_input",
    number=5,
    title="The sliced input",
    defines=(Symbol("TwoStageClassifier", "class", ("vocab_size", "dim", "num_a", "num_b", "label_tokens")),),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _drawer(13, 4, 3, 4, batch=3, length=6), _forward_backward, FORWARD_BACKWARD_WRITES,
                 public=True),
        Scenario(HIDDEN, _drawer(50, 16, 5, 7, batch=(4, 12), length=(6, 16)), _forward_backward,
                 FORWARD_BACKWARD_WRITES),
        Scenario(SINGLE, _drawer(20, 8, 4, 3, batch=1, length=(4, 8)), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(STRIDED, _drawer(30, 8, 4, 5, batch=(3, 8), length=(5, 10), strided=True), _forward_backward,
                 FORWARD_BACKWARD_WRITES),
        Scenario(GRADCHECK, _drawer(11, 3, 3, 2, batch=3, length=5), _gradcheck, (finite_differences.OBSERVED,),
                 dtypes=F64, public=True),
    ),
    checks=checks.gate_checks(
        checks.all_of(PASSES, BACKWARD), NEEDS,
        Check("forward", 2, "logits_a comes from the input as given; logits_b from the input with its last "
              "3 tokens replaced by label_tokens[logits_a.argmax(1)] and their mask set to 1 (any batch size, "
              "length and layout).", PASSES, public=True),
        Check("backward runs", 1, "Backward runs through both passes.", BACKWARD, public=True),
        Check("gradients", 3, "The gradient of every parameter matches the reference, in float32 and float64.",
              checks.matches_reference((GRAD,), "Gradient", (HIDDEN, SINGLE, STRIDED))),
        Check("gradcheck", 1, "Analytic gradients of embed.weight, fc_a.weight and fc_b.weight agree with "
              "finite differences (float64 gradcheck).",
              finite_differences.agree((GRADCHECK,), "gradcheck found gradients that disagree with finite "
                                       "differences"), public=True),
        Check("caller's tensors unchanged", 2, "The caller's `tokens` and `mask` are not modified by forward "
              "or backward.",
              checks.all_of(
                  checks.holds("tokens unchanged", FORWARD, "Your model changed the caller's `tokens` in place"),
                  checks.holds("mask unchanged", FORWARD, "Your model changed the caller's `mask` in place")),
              public=True),
        Check("one encoder", 1, "The model has exactly the submodules embed, fc_a, fc_b and the buffer "
              "label_tokens, before and after a forward pass.", Rule(_structure, None, STRUCTURE), public=True),
    ),
)

CONTRACT = contract.Contract("TwoStageClassifier", (
    contract.Dimension(contract.LAYOUT, ("contiguous", "not contiguous"), "tokens and mask of any layout"),
    contract.Dimension(contract.DTYPE, ("float32", "float64"), "float32 and float64"),
))
"""The situations the notebook lets `TwoStageClassifier` meet (tests/test_contracts_spanned.py measures them)."""
