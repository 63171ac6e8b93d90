"""Exercise 8: one GAN training step, the discriminator's step before the generator's backward.

The report's step computes `d_fake = D(fake)` once and uses it for both losses: `d_loss.backward(
retain_graph=True)`, `opt_D.step()`, then `g_loss.backward()`, whose graph saved D's weights before the
step changed them in place, so it raises. The learner writes the step in the order the notebook states (D
first, on `fake.detach()`; then G's loss through the updated D, from a fresh `D(fake)`), and the grader
compares both networks' parameters after one and after two steps, and the returned losses, with the
reference's, on SGD with momentum and on Adam.

Besides the values, each call of `train_step` is traced with public hooks only (a forward hook on D, hooks
on the gradient of each network's first weight, step pre-hooks on both optimizers), so that a
parameter that drifted can be explained: which backward passes the gradient an optimizer stepped with came
from, whether it was stale, whether D ran again after its step. The trace only explains; the score comes
from the values. One hidden scenario's second call brings batches of another size (drawn per salt) than
the first's. Nothing counts until both calls run and D is right after the first (the gate).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from .. import probes
from ..core import checks
from ..core.evidence import Evidence, Pair
from ..core.messages import INPLACE_ERROR
from ..core.spec import PASS, Check, Exercise, ExpectedError, Family, Rule, Scenario, Symbol, Verdict
from ..feedback.wording import exercise_say
from . import _contract as contract

STEPS = (1, 2)
NETS = ("D", "G")
OPTIMIZER = {"D": "opt_D", "G": "opt_G"}
AFTER = {(net, k): Family(f"{net} after step {k}") for net in NETS for k in STEPS}
"""Each parameter of a network after call k of train_step (`D after step 1 0.weight`)."""
LOSS = {(name, k): f"{name} {k}" for name in ("d_loss", "g_loss") for k in STEPS}
"""The losses call k returned, as floats (`d_loss 1`)."""
RETURNED = Family("returned")
"""Per call: why what train_step returned is not two losses; "" when it is (`returned 1`)."""
GRAD_AT_ENTRY = Family("grad at entry")
"""Inputs: what each parameter's `.grad` holds when train_step is first called (`grad at entry D.0.weight`), left by
the caller's own backward: each optimizer steps on its own loss's gradient alone, so it must not count."""
TRACE = Family("trace")
"""Per call, what the hooks saw (`trace 1 D steps`): see _Tracer.facts."""


class GanLayout(nn.Module):
    """The two networks, as one module so that one drawn state holds both (`state G.0.weight`)."""

    def __init__(self, noise: int, data: int, hidden: int, deep_d: bool = False, tanh_g: bool = False):
        super().__init__()
        self.G = nn.Sequential(nn.Linear(noise, hidden), nn.ReLU(), nn.Linear(hidden, data),
                               *([nn.Tanh()] if tanh_g else []))
        d_hidden = [nn.Linear(hidden, hidden), nn.LeakyReLU(0.2)] if deep_d else []
        self.D = nn.Sequential(nn.Linear(data, hidden), nn.LeakyReLU(0.2), *d_hidden, nn.Linear(hidden, 1))


def _drawer(noise: int, data: int, hidden: int, batch: int | tuple[int, int], grads_at_entry: bool = False,
            **layout: bool):
    """batch (low, high): each call's batch size drawn per salt, the second call's larger than the first's; the
    drawn tensors hold the largest, and each call takes its first rows (`batches`). grads_at_entry: both networks
    arrive with gradients in `.grad` (GRAD_AT_ENTRY)."""

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        def randn(*shape: int, scale: float = 1.0, shift: float = 0.0) -> torch.Tensor:
            return (torch.randn(shape, generator=g, dtype=torch.float64) * scale + shift).to(dtype)

        if isinstance(batch, int):
            batches, rows = "", batch
        else:
            first = int(torch.randint(batch[0], batch[1], (), generator=g))
            rows = first + int(torch.randint(1, 6, (), generator=g))
            batches = f"{first},{rows}"
        inputs = {
            "batches": batches,
            "real": randn(len(STEPS), rows, data, scale=0.5, shift=1.0),
            "noise": randn(len(STEPS), rows, noise),
            **probes.draw_state(GanLayout(noise, data, hidden, **layout), g, dtype),
        }
        if grads_at_entry:
            for key, t in probes.draw_state(GanLayout(noise, data, hidden, **layout), g, dtype).items():
                inputs[GRAD_AT_ENTRY.key(probes.STATE.member(key))] = t * 10
        return inputs

    return draw


def _optimizer(kind: str, params, lr: float) -> torch.optim.Optimizer:
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    return torch.optim.Adam(params, lr=lr, betas=(0.5, 0.999))  # the DCGAN example's betas


class _Tracer:
    """Watches one training run through public hooks: the forward calls of D, each backward pass
    that reaches a network's first weight (the graph task it belongs to, and whether that weight's `.grad`
    was empty before it), and each optimizer step."""

    def __init__(self, G: nn.Module, D: nn.Module, opt_G: torch.optim.Optimizer, opt_D: torch.optim.Optimizer):
        self.time = 0
        self.call = 0
        self.call_start = 0
        self.reached: dict[int, set[str]] = {}  # graph task -> the networks its backward reached
        self.since_empty: dict[str, list[tuple[int, int]]] = {"D": [], "G": []}  # (task, time) into .grad
        self.steps: list[tuple[str, int]] = []  # this call's optimizer steps: (net, time)
        self.d_calls: list[int] = []  # this call's forward calls of D: time
        self.at_step: dict[str, dict[str, Any]] = {}  # net -> what its gradient held at its first step
        self._fallback_task = -1
        for net, module in (("D", D), ("G", G)):
            first = next(module.parameters())
            first.register_hook(self._gradient_hook(net, first))
        D.register_forward_hook(lambda module, args, out: self.d_calls.append(self._tick()))
        opt_D.register_step_pre_hook(lambda opt, args, kwargs: self._stepped("D"))
        opt_G.register_step_pre_hook(lambda opt, args, kwargs: self._stepped("G"))

    def _tick(self) -> int:
        self.time += 1
        return self.time

    def _task(self) -> int:
        task = getattr(torch._C, "_current_graph_task_id", None)
        if task is not None:
            return int(task())
        self._fallback_task -= 1  # without task ids, every gradient is a pass of its own
        return self._fallback_task

    def _gradient_hook(self, net: str, weight: torch.Tensor) -> Callable[[torch.Tensor], None]:
        def hook(grad: torch.Tensor) -> None:
            task, now = self._task(), self._tick()
            self.reached.setdefault(task, set()).add(net)
            held = weight.grad
            if held is None or not bool(held.detach().ne(0).any()):
                self.since_empty[net] = []
            self.since_empty[net].append((task, now))

        return hook

    def _stepped(self, net: str) -> None:
        now = self._tick()
        self.steps.append((net, now))
        if net not in self.at_step:
            # The tasks are looked up later (facts): a pass still running reaches the other network after this.
            self.at_step[net] = {"passes": list(self.since_empty[net]), "time": now}

    def begin(self) -> None:
        self.call += 1
        self.call_start = self._tick()
        self.steps, self.d_calls, self.at_step = [], [], {}

    def facts(self) -> dict[str, Any]:
        """TRACE observations of the call that just ended (`trace 1 D steps`, ...):
        `N steps` how many times opt_N stepped; `order` the optimizers in the order they stepped;
        at opt_N's first step: `N passes` the backward passes its first weight's gradient held since it was
        last empty, `N stale` whether one was made before this call, `N passes through other` how many of
        this call's also reached the other network; `G passes before D's step`; `D calls after its step`."""
        k = self.call
        key = lambda what: TRACE.key(k, what)  # noqa: E731
        found: dict[str, Any] = {key("order"): ", ".join(OPTIMIZER[net] for net, _ in self.steps)}
        d_step = next((t for net, t in self.steps if net == "D"), None)
        for net in NETS:
            other = "G" if net == "D" else "D"
            found[key(f"{net} steps")] = sum(n == net for n, _ in self.steps)
            seen = self.at_step.get(net)
            if seen is None:
                continue
            passes = seen["passes"]
            found[key(f"{net} passes")] = len(passes)
            found[key(f"{net} stale")] = any(t < self.call_start for _, t in passes)
            found[key(f"{net} passes through other")] = sum(  # this call's passes only: older ones are stale
                other in self.reached.get(task, ()) for task, t in passes if t > self.call_start)
            if net == "G":
                found[key("G passes before D's step")] = (
                    sum(t < d_step for _, t in passes) if d_step is not None else 0)
        if d_step is not None:
            found[key("D calls after its step")] = sum(t > d_step for t in self.d_calls)
        return found


def _problem_with(returned: Any) -> str:
    """Why `returned` is not (d_loss, g_loss) as two Python numbers; "" when it is."""
    if not isinstance(returned, (tuple, list)) or len(returned) != 2:
        if not isinstance(returned, (tuple, list)):
            return exercise_say("`train_step` returned a {type}, not the pair (d_loss, g_loss)",
                                type=type(returned).__name__)
        return exercise_say("`train_step` returned {count} values, not the pair (d_loss, g_loss)", count=len(returned))
    for v in returned:
        if isinstance(v, torch.Tensor):
            why = " (a loss tensor keeps its step's whole graph alive)" if v.grad_fn is not None else ""
            return exercise_say("`train_step` returned a tensor among its losses; return Python floats: "
                                "`d_loss.item()`{why}", why=why)
        if not isinstance(v, (float, int)) or isinstance(v, bool):
            return exercise_say("`train_step` returned a {type} among its losses; return Python floats (`.item()`)",
                                type=type(v).__name__)
    return ""


def _trainer(opt_g: str, lr_g: float, opt_d: str, lr_d: float, sizes: tuple[int, int, int], **layout: bool):
    def run(ns, inputs, device, obs):
        dtype = inputs["real"].dtype
        pair = probes.build(lambda: GanLayout(*sizes, **layout), (), inputs, device, dtype)
        G, D = pair.G, pair.D
        for name, p in pair.named_parameters():  # the caller's own backward left these, if any
            entry = inputs.get(GRAD_AT_ENTRY.key(name))
            p.grad = None if entry is None else entry.to(device).clone()
        opt_G = _optimizer(opt_g, G.parameters(), lr_g)
        opt_D = _optimizer(opt_d, D.parameters(), lr_d)
        tracer = _Tracer(G, D, opt_G, opt_D)
        rows = [int(n) for n in inputs["batches"].split(",")] if inputs["batches"] else [len(inputs["real"][0])] * 2
        for k in STEPS:
            tracer.begin()
            try:
                returned = ns["train_step"](G, D, opt_G, opt_D, inputs["real"][k - 1][:rows[k - 1]].clone(),
                                            inputs["noise"][k - 1][:rows[k - 1]].clone())
            finally:
                obs.update(tracer.facts())
            obs[RETURNED.key(k)] = _problem_with(returned)
            if not obs[RETURNED.key(k)]:
                for name, v in zip(("d_loss", "g_loss"), returned):
                    obs[LOSS[name, k]] = float(v)
            for net, module in (("D", D), ("G", G)):
                for name, p in module.named_parameters():
                    obs[AFTER[net, k].key(name)] = p.detach().clone()

    return run


TRAINING_WRITES: tuple[str | Family, ...] = (*AFTER.values(), *LOSS.values(), RETURNED, TRACE)


# --- feedback -------------------------------------------------------------------------------------------

ORDER_SAID = ("the order to follow: D's step first (opt_D.zero_grad(); d_loss on D(real) and D(fake.detach()); "
              "backward; opt_D.step()), then G's (opt_G.zero_grad(); g_loss on a fresh D(fake), through the updated "
              "D; backward; opt_G.step())")


def _why(net: str, k: int, trace: dict[str, Any]) -> list[str]:
    """What the trace of call k says about the gradient opt_`net` stepped with: fixed words, no values."""
    t = lambda what: trace.get(TRACE.key(k, what))  # noqa: E731
    opt, said = OPTIMIZER[net], list[str]()
    steps = t(f"{net} steps")
    if steps is None:
        return said
    if steps == 0:
        return [exercise_say("`{opt}.step()` did not run in this call: step each optimizer once per call", opt=opt)]
    if steps > 1:
        said.append(exercise_say("`{opt}.step()` ran more than once in one call: step each optimizer once per call",
                                 opt=opt))
    if net == "G" and (t("order") or "").startswith("opt_G"):
        said.append("G stepped before D: step D first, then compute g_loss through the updated D")
    if t(f"{net} passes") == 0:
        if net == "G":
            said.append("G's optimizer stepped with no gradient: g_loss's backward never reached G (was `fake` "
                        "detached, or made under `torch.no_grad()`, for g_loss too? Detach it only in D's loss)")
        else:
            said.append("D's optimizer stepped with no gradient from d_loss")
        return said
    if t(f"{net} stale"):
        said.append(exercise_say("{net}'s `.grad` still held gradients from the previous call when `{opt}.step()` "
                                 "ran: zero {net}'s gradients (`{opt}.zero_grad()`) before its backward",
                                 net=net, opt=opt))
    passes, through_other = t(f"{net} passes") or 0, t(f"{net} passes through other") or 0
    if net == "D" and passes > 1 and through_other > 0:
        said.append("D's optimizer used gradients from g_loss too: a backward that also reached G added to D's "
                    "`.grad` before `opt_D.step()`; step D right after d_loss's backward, before g_loss's backward "
                    "runs (and then build g_loss from a fresh D(fake))")
    if net == "G":
        before = t("G passes before D's step") or 0
        if 0 < before < passes:
            said.append("G's optimizer used d_loss's gradient too: `fake` was not detached in D's loss, so "
                        "d_loss's backward also reached G; use `D(fake.detach())` in d_loss, or zero G's grads "
                        "right before g_loss's backward")
        if t("D calls after its step") == 0 and not (t("order") or "").startswith("opt_G"):
            said.append("g_loss was computed through D before its update (D did not run again after "
                        "`opt_D.step()`): compute g_loss from a fresh `D(fake)` after D's step")
    return said


def _diagnosis(net: str, k: int, trace: dict[str, Any], context: str) -> str:
    """What to look at: the trace's findings; else, where nothing earlier explains the miss, the loss to check."""
    said = _why(net, k, trace)
    if said:
        return "; ".join(said) + "."
    if context:
        return ""
    if net == "D":
        return ("Check d_loss (BCE with logits of D(real) against 1 plus that of D(fake) against 0, each a mean "
                "over the batch, with D as the call found it) and that opt_D steps once, on d_loss's gradients "
                "alone.")
    return ("Check g_loss (BCE with logits of D(fake) against 1, the non-saturating loss, through the updated D) and "
            "that opt_G steps once, after D's step, on g_loss's gradients alone.")


def _first_miss(ev: Evidence, pair: Pair, family: Family) -> tuple[str, str] | None | Verdict:
    """(key, problem) of the first parameter of `family` that differs from the reference's; a Verdict where one
    was never observed; None when all match."""
    tol = checks.tolerance(pair.trial.dtype, pair.trial.device)
    for key, want in family.members(pair.want.values).items():
        full = family.key(key)
        if full not in pair.got.values:
            return checks.missing(ev, pair, full, f"`{family.name}`")
        problem = checks.mismatch(pair.got.values[full], want, tol)
        if problem:
            return full, problem
    return None


def _differs(ev: Evidence, pair: Pair, net: str, k: int) -> bool:
    """Whether `net`'s parameters after call k were observed and differ from the reference's."""
    miss = _first_miss(ev, pair, AFTER[net, k])
    return miss is not None and not isinstance(miss, Verdict)


def _context(ev: Evidence, pair: Pair, net: str, k: int) -> str:
    """What already differed before this miss, which may explain it."""
    other = "G" if net == "D" else "D"
    if k > 1 and _differs(ev, pair, net, 1):
        return " (they already differ after step 1)"
    if k > 1 and _differs(ev, pair, other, 1):
        return exercise_say(" (after step 1 {other}'s parameters already differ, so this step started from another "
                            "{other})", other=other)
    if net == "G" and _differs(ev, pair, "D", k):
        return " (D's do too, and g_loss goes through the updated D)"
    return ""


def _parameters_match(nets: tuple[str, ...], k: int, scenarios: tuple[str, ...] | None = None) -> Rule:
    """The parameters of each of `nets` after call k equal the reference's; a miss says which network, at which
    step, what already differed, and what the trace tells about the gradient its optimizer used."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            for net in nets:
                miss = _first_miss(ev, pair, AFTER[net, k])
                if isinstance(miss, Verdict):
                    return miss
                if miss is None:
                    continue
                key, problem = miss
                context = _context(ev, pair, net, k)
                why = _diagnosis(net, k, pair.got.values, context)
                head = exercise_say("After step {k}, {net}'s parameters differ from the reference's{context}", k=k,
                                    net=net, context=context)
                tail = f" {why}" if why else ""
                return checks.failed(exercise_say("{head}: `{key}` {problem}, in {trial}.{tail}", head=head, key=key,
                                                  problem=problem, trial=pair.label, tail=tail),
                                     exercise_say("{head}.{tail}", head=head, tail=tail))
        return PASS

    reads = tuple(AFTER[net, step] for net in NETS for step in STEPS if step <= k)
    return Rule(evaluate, scenarios, (*reads, TRACE))


def _losses_match(ev: Evidence) -> Verdict:
    """train_step returned (d_loss, g_loss) as numbers in both calls, equal to the reference's."""
    for pair in ev.pairs():
        tol = checks.tolerance(pair.trial.dtype, pair.trial.device)
        for k in STEPS:
            returned = pair.got.values.get(RETURNED.key(k))
            if returned is None:
                return checks.missing(ev, pair, RETURNED.key(k), "What `train_step` returned")
            if returned:
                return checks.failed(exercise_say("{returned} (in {trial}, call {k}).", returned=returned,
                                                  trial=pair.label, k=k),
                                     "`train_step` did not return (d_loss, g_loss) as two Python floats")
            for name in ("d_loss", "g_loss"):
                got, want = pair.got.values[LOSS[name, k]], pair.want.values[LOSS[name, k]]
                problem = checks.mismatch(torch.tensor(got), torch.tensor(want), tol)
                if not problem:
                    continue
                if k > 1 and (_differs(ev, pair, "D", 1) or _differs(ev, pair, "G", 1)):
                    why = ("The parameters already differ after step 1 (see the checks on the parameters), so the "
                           "second call's losses differ too.")
                elif name == "g_loss" and _differs(ev, pair, "D", k):
                    why = ("D's parameters after this step differ (see the checks on the parameters), and g_loss goes "
                           "through the updated D.")
                elif name == "d_loss":
                    why = ("Return d_loss as computed for D's step, before opt_D.step(): BCE with logits of D(real) "
                           "against 1 plus that of D(fake) against 0, each a mean over the batch.")
                elif pair.got.values.get(TRACE.key(k, "D calls after its step")) == 0:
                    why = ("g_loss was computed through D before its update: compute it from a fresh D(fake) after "
                           "opt_D.step(), and return that value.")
                else:
                    why = ("Return g_loss as computed for G's step: BCE with logits of D(fake) against 1, through the "
                           "updated D.")
                head = exercise_say("The {name} returned by call {k} differs from the reference's", name=name, k=k)
                return checks.failed(exercise_say("{head} ({problem}), in {trial}. {why}", head=head, problem=problem,
                                                  trial=pair.label, why=why),
                                     exercise_say("{head}. {why}", head=head, why=why))
    return PASS


def _runs(ev: Evidence) -> Verdict:
    """Both calls of train_step run to the end; an error's explanation ends with what this exercise asks."""
    for pair in ev.pairs():
        error = pair.got.error
        if error is None:
            continue
        if INPLACE_ERROR.search(error.message):
            hint = (" In this step, G's loss must go through D after its update: compute it from a fresh D(fake) "
                    "after opt_D.step(); " + ORDER_SAID + ".")
        elif "backward through the graph a second time" in error.message:
            hint = (" A graph's saved tensors are freed by its first backward: compute D(fake) afresh for g_loss "
                    "after opt_D.step(), and detach fake in d_loss (D(fake.detach())) so that d_loss's backward "
                    "does not free G's graph.")
        else:
            hint = ""
        return checks.failed(exercise_say("The training step failed. In {trial}: {explanation}{hint}",
                                          trial=pair.label, explanation=ev.explain(error), hint=hint),
                             exercise_say("The training step failed.{hint}", hint=hint), trial=pair.trial, error=error)
    return PASS


def _scenario(name: str, sizes: tuple[int, int, int], batch: int | tuple[int, int], g: tuple[str, float],
              d: tuple[str, float],
              public: bool = False, grads_at_entry: bool = False, **layout: bool) -> Scenario:
    """Networks of `sizes` (noise, data, hidden) and `layout`, a batch of `batch`, G's and D's optimizers
    (kind, lr); grads_at_entry: both networks arrive with gradients in `.grad`."""
    return Scenario(name, _drawer(*sizes, batch, grads_at_entry, **layout),
                    _trainer(g[0], g[1], d[0], d[1], sizes, **layout), TRAINING_WRITES, public=public)


PUBLIC_SGD, PUBLIC_ADAM, SGD, ADAM, MIXED = "public sgd", "public adam", "sgd", "adam", "sgd for G, adam for D"
UNEQUAL = "batches of two sizes"
DIRTY = "gradients at entry"
RUNS = Rule(_runs, None, ())
D_AFTER_ONE = _parameters_match(("D",), 1)
NEEDS = ("both calls must first run and D's parameters be right after the first (the checks `runs` and "
         "`D after step 1`)")

EXERCISE = Exercise(
    id="gan_step_order",
    preload=("torch._dynamo", "torch.fx.experimental.symbolic_shapes"),  # its trials step an optimizer
    number=8,
    title="The GAN step order",
    defines=(Symbol("train_step", "function", ("G", "D", "opt_G", "opt_D", "real", "noise")),),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        _scenario(PUBLIC_SGD, (2, 3, 4), 5, ("sgd", 0.1), ("sgd", 0.1), public=True),
        _scenario(PUBLIC_ADAM, (3, 2, 4), 6, ("adam", 0.01), ("adam", 0.01), public=True),
        _scenario(SGD, (4, 5, 8), 8, ("sgd", 0.05), ("sgd", 0.2), tanh_g=True),
        _scenario(ADAM, (3, 4, 6), 7, ("adam", 0.02), ("adam", 0.005), deep_d=True),
        _scenario(MIXED, (5, 3, 7), 9, ("sgd", 0.1), ("adam", 0.01), deep_d=True, tanh_g=True),
        _scenario(UNEQUAL, (3, 4, 6), (4, 10), ("sgd", 0.1), ("adam", 0.01)),
        _scenario(DIRTY, (4, 3, 6), 6, ("adam", 0.02), ("sgd", 0.1), grads_at_entry=True),
    ),
    checks=checks.gate_checks(
        checks.all_of(RUNS, D_AFTER_ONE), NEEDS,
        Check("runs", 1, "Two calls of train_step run without an error, on SGD with momentum and on Adam, with "
              "batches of any size.", RUNS, public=True),
        Check("D after step 1", 3, "After one step, D's parameters equal the reference's: opt_D stepped once, first, "
              "on the gradients of d_loss alone.", D_AFTER_ONE, public=True),
        Check("G after step 1", 3, "After one step, G's parameters equal the reference's: opt_G stepped once, after "
              "D's step, on the gradients of g_loss alone, taken through the updated D.",
              _parameters_match(("G",), 1), public=True),
        Check("two steps", 2, "After a second call, both networks' parameters equal the reference's (each step "
              "starts from clean gradients).", _parameters_match(("D", "G"), 2), public=True),
        Check("losses", 1, "Each call returns (d_loss, g_loss) as Python floats, equal to the reference's: d_loss "
              "before D's step, g_loss through the updated D.",
              Rule(_losses_match, None, (*LOSS.values(), RETURNED, TRACE, *AFTER.values())),
              public=True),
    ),
)

CONTRACT = contract.Contract("train_step", (
    contract.Dimension(contract.GRADS_AT_ENTRY, ("none", "non-zero"),
                       "each optimizer steps on its own loss's gradient only: nothing left over from the other loss "
                       "or from an earlier call (or from the caller's own backward)"),
    contract.Dimension(contract.OPTIMIZER, ("SGD", "Adam"), "SGD with momentum, Adam, or one of each"),
    contract.Dimension(contract.GRAD_NORM, ("at most 1", "above 1"), "the steps listed are all there is"),
    contract.Dimension(contract.DTYPE, ("float32", "float64"), "float32 and float64"),
    contract.Dimension(contract.MODE, ("train",), "the grader builds G and D (in training mode)"),
))
"""The situations the notebook lets `train_step` meet (tests/test_contracts_spanned.py measures them)."""
