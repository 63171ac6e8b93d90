"""`autograder workshop misconceptions [--check]`: writes course.json, what the live view knows of the course.

For every exercise: its public check names, and what a participant's attempt of each known wrong answer of
its catalogue (references/<id>.py: BROKEN, WRONG) looks like, run through the notebook's self-check path
(public inputs, in this process: the catalogues are the teacher's own code). Answers that fail alike share
one signature and one label ("A or B"); an answer that passes every public check cannot be told from a
right one and is listed as unseen. Also: the in-place ops of the installed torch (the only op names an
attempt may show). Needs torch and references/; the server and participants' kernels never import it.

Each explanation is a claim about PyTorch, shown on a projector: the claim's own check (`proof`) runs here,
on the installed torch, before the file is written.
"""

from __future__ import annotations

import builtins
import inspect
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from ..catalog import exercise_ids
from ..exercises import get
from ..feedback.wording import say
from ..intake.cells import marker_line
from ..notebook.selfcheck import self_check
from ..pipeline import prepare
from ..reference_store import known_submissions
from .attempt_fields import attempt_fields
from .course import DATA, FORMAT, normalise_line, signature

BOOK = Path(__file__).resolve().parents[2] / "book" / "chapters"
BUG = say("workshop: the bug unchanged")


def _version_error(fn: Callable[[], None]) -> bool:
    try:
        fn()
    except RuntimeError as e:
        return "modified by an inplace operation" in str(e)
    return False


def _no_grad_write_still_fails() -> bool:
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    with torch.no_grad():
        y += 1
    return _version_error(lambda: y.sum().backward())


def _data_write_is_silent_and_wrong() -> bool:
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y.data.mul_(2)  # sigmoid's backward reads its output, now doubled: no error, another gradient
    if y._version != 0:
        return False
    y.sum().backward()
    right = torch.sigmoid(x.detach()) * (1 - torch.sigmoid(x.detach()))
    assert x.grad is not None  # a leaf that requires grad, after backward
    return not torch.allclose(x.grad, right)


def _detach_shares_and_cuts() -> bool:
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    d = y.detach()
    cut = d.requires_grad is False and d.data_ptr() == y.data_ptr()
    d.add_(1)  # the same storage and version counter: exp's saved output has changed
    return cut and _version_error(lambda: y.sum().backward())


def _late_clone_does_not_help() -> bool:
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y.add_(1)
    z = y.clone()
    return _version_error(lambda: z.sum().backward())


def _retain_graph_does_not_help() -> bool:
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    loss = y.sum()
    y.add_(1)
    return _version_error(lambda: loss.backward(retain_graph=True))


def _c_carries_the_last_graph() -> bool:
    w = torch.randn(3, requires_grad=True)
    h, c = torch.zeros(3), torch.zeros(3)
    for _ in range(2):  # two chunks of an LSTM-like step, h detached between them and c not
        c = c + w.tanh()
        h = c.tanh()
        try:
            (h.sum() + c.sum()).backward()
        except RuntimeError as e:
            return "backward through the graph a second time" in str(e)
        h = h.detach()
    return False


@dataclass(frozen=True)
class Explanation:
    words: re.Pattern  # matched against a catalogue name
    raises: bool  # said only of answers whose run raised a RuntimeError (True) or raised nothing (False)
    text: str
    chapter: str | None  # a file of book/chapters; None: the exercise's own page (words about its contract)
    proof: Callable[[], bool] | None  # the claim about PyTorch, run before course.json is written; None: the
    # words are about what the exercise asks, shown by the group's own runs failing those checks


def _written(text: str, chapter: str | None = None, proof: Callable[[], bool] | None = None) -> Explanation:
    """An explanation written for one label (LABELS keys it by exercise and one of its answers' names)."""
    return Explanation(re.compile(""), True, text, chapter, proof)


def _clamp_into_softmax_raises() -> bool:
    def run(write: Callable[[torch.Tensor], object]) -> bool:
        logits = torch.randn(2, 3, requires_grad=True)
        p = logits.softmax(-1)
        write(p)
        return _version_error(lambda: p.log().sum().backward())
    return run(lambda p: p.clamp_(min=0.1)) and run(lambda p: p.detach().clamp_(min=0.1))


def _hidden_write_misses_a_path() -> bool:
    """Through .data or after .detach, a sum loses a path of its gradient, and nothing raises."""
    x = torch.randn(3, requires_grad=True)

    def grad(add: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> torch.Tensor:
        x.grad = None
        add(x.exp(), x).sum().backward()
        assert x.grad is not None
        return x.grad.clone()

    def through_data(out: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        out.data += x.data
        return out

    right = grad(lambda out, x: out + x)
    return all(not torch.allclose(grad(add), right)
               for add in (through_data, lambda out, x: out.detach() + x))


def _mutation_context_closed_before_backward() -> bool:
    x = torch.randn(3, requires_grad=True)
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        y = x.sigmoid()
        y.add_(1)
    try:
        y.sum().backward()
    except Exception:  # noqa: BLE001 - PyTorch raises an AssertionError here; any error proves the words
        return True
    return False


def _a_tuple_has_no_detach() -> bool:
    return not hasattr((torch.zeros(1), torch.zeros(1)), "detach")


def _history_grows_without_detach() -> bool:
    w = torch.randn(3, requires_grad=True)
    h = torch.zeros(3)
    sizes = []
    for _ in range(3):
        h = (h + w).tanh()
        node, n = h.grad_fn, 0
        while node is not None:  # the chain of nodes behind the state
            n += 1
            node = next((f for f, _ in node.next_functions if f is not None and f.name() != "AccumulateGrad"), None)
        sizes.append(n)
    return sizes[0] < sizes[1] < sizes[2]


EXPLANATIONS = (
    Explanation(re.compile(r"no_grad"), True, say("workshop: explain no_grad"), "06_grad_modes",
                _no_grad_write_still_fails),
    Explanation(re.compile(r"\.data"), False, say("workshop: explain data"), "05_detach_clone_data",
                _data_write_is_silent_and_wrong),
    Explanation(re.compile(r"detach"), False, say("workshop: explain detach cuts"), "05_detach_clone_data",
                _detach_shares_and_cuts),
    Explanation(re.compile(r"detach"), True, say("workshop: explain detach shares"), "05_detach_clone_data",
                _detach_shares_and_cuts),
    Explanation(re.compile(r"\bclone"), True, say("workshop: explain late clone"), "05_detach_clone_data",
                _late_clone_does_not_help),
    Explanation(re.compile(r"retain_graph"), True, say("workshop: explain retain_graph"), "03_version_counter",
                _retain_graph_does_not_help),
)


LABELS = {
    # written for one catalogue entry (or the group it leads), where a keyword of its name would say
    # something else; each must hold for every answer of its group (tests/test_workshop_misconceptions.py)
    ("rnn_hidden", "detaches h but not c"): Explanation(
        re.compile(""), True, say("workshop: explain h but not c"), "08_case_studies", _c_carries_the_last_graph),
    ("leaf_sgd", "no_grad around the parameter update only"): _written(
        say("workshop: label momentum buffer"), "06_grad_modes"),
    ("leaf_sgd", "rebinding the loop name"): _written(say("workshop: label not in place"), "04_leaf_tensors"),
    ("leaf_sgd", "requires_grad switched off and left off"): _written(
        say("workshop: label requires_grad off"), "04_leaf_tensors"),
    ("leaf_sgd", "gradients zeroed, not set to None"): _written(say("workshop: label grads zeroed")),
    ("data_trap", "clamp_ on softmax's output"): _written(
        say("workshop: label clamp_ softmax"), "03_version_counter", _clamp_into_softmax_raises),
    ("residual_add", ".data add"): _written(
        say("workshop: label hidden add"), "05_detach_clone_data", _hidden_write_misses_a_path),
    ("residual_add", "adds into the caller's x"): _written(say("workshop: label adds into x")),
    ("residual_add", "relu after the add"): _written(say("workshop: label relu after add")),
    ("inplace_dropout", "inplace=False"): _written(say("workshop: label not proj's own")),
    ("inplace_dropout", "bernoulli mask without rescale"): _written(say("workshop: label not dropout")),
    ("inplace_dropout", "in place on .data"): _written(say("workshop: label hidden dropout"), "05_detach_clone_data"),
    ("inplace_dropout", "dropout in place on the caller's x"): _written(say("workshop: label dropout into x")),
    ("sliced_input", "the seed's fix: copies and a second encoder"): _written(say("workshop: label second pass")),
    ("sliced_input", "deepcopy of embed inside forward"): _written(
        say("workshop: label copy of embed"), "05_detach_clone_data"),
    ("sliced_input", "deepcopy of embed registered in forward"): _written(say("workshop: label registered copy")),
    ("sliced_input", "allow_mutation_on_saved_tensors in forward"): _written(
        say("workshop: label mutation context"), "10_beyond_the_basics",
        _mutation_context_closed_before_backward),
    ("sliced_input", "label_tokens not a buffer"): _written(say("workshop: label not a buffer")),
    ("multi_output_view", ".data scaling"): _written(say("workshop: label hidden scale"), "05_detach_clone_data"),
    ("multi_output_view", "scale dropped"): _written(say("workshop: label scale place")),
    ("multi_output_view", "scale folded into the weights"): _written(say("workshop: label scaled weights")),
    ("rnn_hidden", "allow_mutation_on_saved_tensors silences the error"): _written(say("workshop: label not the loop")),
    ("rnn_hidden", ".detach() breaks on the LSTM tuple"): _written(
        say("workshop: label tuple detach"), None, _a_tuple_has_no_detach),
    ("rnn_hidden", "right numbers, but each chunk's graph links to the last"): _written(
        say("workshop: label history grows"), "05_detach_clone_data", _history_grows_without_detach),
    ("rnn_hidden", "copies the new state into state0"): _written(say("workshop: label into state0")),
    ("gan_step_order", "D's step moved after G's backward"): _written(say("workshop: label D late")),
    ("gan_step_order", "G's gradient through the old D (backward kept to G, D's step after it)"): _written(
        say("workshop: label G step")),
    ("gan_step_order", "D's grads never zeroed"): _written(say("workshop: label D grads kept")),
    ("gan_step_order", "the loss tensors returned"): _written(say("workshop: label loss floats")),
    ("gan_step_order", "targets made once, for the first batch"): _written(say("workshop: label first batch")),
    ("hook_inplace", "detach the target's output"): _written(
        say("workshop: label detached target"), "05_detach_clone_data"),
    ("hook_inplace", "hook on the ReLU module instead"): _written(say("workshop: label hook on relu")),
    ("hook_inplace", "grad_input instead of grad_output"): _written(say("workshop: label grad_input")),
    ("hook_inplace", "ReLU removed"): _written(say("workshop: label relu removed")),
    ("saved_hooks", "keeps the tensor with its history"): _written(
        say("workshop: label pack history"), "10_beyond_the_basics"),
    ("saved_hooks", "checks the copy's version"): _written(say("workshop: label which version"), "03_version_counter"),
    ("saved_hooks", "assert instead of RuntimeError"): _written(say("workshop: label assert")),
    ("saved_hooks", "unpack frees its copy"): _written(say("workshop: label unpack twice")),
    ("saved_hooks", "says it changed, not the versions"): _written(
        say("workshop: label say versions"), "01_reading_the_error"),
    ("custom_inplace", "saves a copy of the input"): _written(
        say("workshop: label save output"), "10_beyond_the_basics"),
    ("custom_inplace", "the weight's gradient from the output, not the input"): _written(
        say("workshop: label weight grad")),
    ("custom_inplace", "built-in prelu, out of place"): _written(
        say("workshop: label own function"), "10_beyond_the_basics"),
    ("custom_inplace", "an error of its own in backward"): _written(
        say("workshop: label own error"), "10_beyond_the_basics"),
    ("capstone", "only the raising line fixed"): _written(say("workshop: label silent bugs"), "05_detach_clone_data"),
    ("capstone", "a new Parameter for the clamp"): _written(say("workshop: label new parameter")),
    ("capstone", "an index kept from the first batch"): _written(say("workshop: label first batch")),
}
MAX_NAMES = 2  # a label names at most this many of the answers that fail alike: two projector lines


def _starter(name: str) -> bool:
    """The catalogue's "starter without the raise": no attempt at all, never a misconception."""
    return name.startswith("starter")


def _label(names: list[str]) -> str:
    shown = " or ".join(names[:MAX_NAMES])
    return say("workshop: label and more", label=shown, more=len(names) - MAX_NAMES) if len(names) > MAX_NAMES \
        else shown


def _chapter(name: str) -> str:
    """'Chapter 6: no_grad, ...' from the chapter's first heading."""
    heading = next(line for line in (BOOK / f"{name}.md").read_text(encoding="utf-8").splitlines()
                   if line.startswith("# "))
    number, _, title = heading[2:].partition(". ")
    return say("workshop: read chapter", number=number, title=title)


def _run(exercise, prepared, code: str) -> tuple[str, str, str | None]:
    """(status, signature, culprit line) of `code` in the self-check's path: as an answer cell a participant
    ran."""
    found = self_check(exercise.id, history=[f"{marker_line(1, 1)}\n{code}"], namespace={}, timeout=60)
    if found.result is None or found.report is None:
        raise RuntimeError(f"{exercise.id}: a catalogue entry did not finish")
    if found.report.load_error is not None and found.report.load_error.type == "SyntaxError":
        raise RuntimeError(f"{exercise.id}: a catalogue entry does not load: {found.report.load_error.message}")
    fields = attempt_fields(found.result, found.report)
    return (fields["status"], signature(fields["failing"], fields["error"], fields["op"], fields["grad_mode"]),
            fields["line"])


def _explain(exercise, names: list[str], key: str) -> tuple[str, str]:
    """The words shown for a group of answers that fail alike, and where the course explains them: one
    explanation written for the label (LABELS), or one whose keyword every name of the group has (never one
    name's explanation for the others); else which checks it fails, by name."""
    failing, error, _, _ = json.loads(key)
    others = [n for n in names if n != BUG]
    found = [LABELS[exercise.id, n] for n in others if (exercise.id, n) in LABELS][:1] or [
        e for e in EXPLANATIONS if (exercise.id, others[0] if others else "") not in LABELS
        and ((error == "RuntimeError") if e.raises else (error is None))
        and others and all(e.words.search(n) for n in others)][:1]
    if found and BUG not in names:
        text = found[0].text
    else:
        public = [c.name for c in exercise.checks if c.public]
        fails = (say("workshop: every check") if sorted(failing) == sorted(public)
                 else ", ".join(f"'{name}'" for name in failing))
        text = say("workshop: fails like the bug", fails=fails) if BUG in names else say("workshop: fails", fails=fails)
    chapter = found[0].chapter if found and BUG not in names else None
    read = (_chapter(chapter) if chapter is not None
            else say("workshop: read exercise", number=exercise.number, title=exercise.title))
    return text, read


def exercise_entry(exercise_id: str) -> tuple[dict, set[str], set[str]]:
    """The exercise's part of course.json, and the errors and ops its catalogue's runs named."""
    exercise = get(exercise_id)
    prepared = prepare(exercise, public_only=True)
    known = known_submissions(exercise_id)
    groups: dict[str, list[str]] = {}
    unseen, errors, ops = [], set(), set()
    entries = [(BUG, known.broken)] + [(n, code) for n, (code, _) in known.wrong.items() if not _starter(n)]
    bug_line = None
    for name, code in entries:
        status, key, line = _run(exercise, prepared, code)
        if name == BUG:
            bug_line = normalise_line(line) if line and json.loads(key)[2] else None
        if status == "passed":
            unseen.append(name)
        else:
            groups.setdefault(key, []).append(name)
            _, error, op, _ = json.loads(key)
            errors |= {error} - {None}
            ops |= {op} - {None}
    misconceptions = []
    for i, (key, names) in enumerate(sorted(groups.items(), key=lambda item: item[1][0] != BUG)):
        text, read = _explain(exercise, names, key)
        misconceptions.append({"id": f"{exercise_id}/{i}", "signature": key, "label": _label(names),
                               "explanation": text, "read": read})
    entry = {"number": exercise.number, "title": exercise.title,
             "checks": [c.name for c in exercise.checks if c.public], "misconceptions": misconceptions,
             "unseen": unseen}
    if bug_line is not None:  # the bug raises at a write the locator names: a changed line there is a tried fix
        entry["bug_line"] = bug_line
        entry["tried"] = {"id": f"{exercise_id}/tried", "instead_of": f"{exercise_id}/0",
                          "label": say("workshop: tried fix label"), "explanation": say("workshop: tried fix"),
                          "read": _chapter("05_detach_clone_data")}
    return entry, errors, ops


def inplace_ops() -> set[str]:
    """The names the locator gives to in-place writes on the installed torch: Tensor methods ending in `_`,
    index assignment and the augmented operators, torch's own `*_` functions and `_foreach_*_`, and the
    functionals that take `inplace`."""
    functional = torch.nn.functional
    names = {f"torch.Tensor.{n}" for n in dir(torch.Tensor) if re.fullmatch(r"[a-z][a-z0-9_]*[a-z0-9]_", n)}
    names |= {f"torch.Tensor.{n}" for n in dir(torch.Tensor) if re.fullmatch(r"__(i[a-z]+|setitem)__", n)}
    names |= {f"torch.{n}" for n in dir(torch) if re.fullmatch(r"_?[a-z][a-z0-9_]*[a-z0-9]_", n)}
    for n in dir(functional):
        fn = getattr(functional, n)
        try:
            takes = callable(fn) and "inplace" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            takes = False
        if takes or (callable(fn) and re.fullmatch(r"[a-z][a-z0-9_]*[a-z0-9]_", n)):
            names.add(f"torch.nn.functional.{n}")
    return names


def _a_write_through_another_name_is_seen() -> bool:
    """The tried fix's words: writing the same tensor through another name for it (a view, `detach()`) is the
    same write to autograd."""
    def through(name: Callable[[torch.Tensor], torch.Tensor]) -> bool:
        x = torch.randn(4, requires_grad=True)
        y = x.exp()
        name(y).add_(1)
        return _version_error(lambda: y.sum().backward())
    return all(through(name) for name in (torch.Tensor.detach, lambda t: t[:2], lambda t: t.view(2, 2)))


def build() -> dict:
    bad = [e.text[:40] for e in (*EXPLANATIONS, *LABELS.values()) if e.proof is not None and not e.proof()]
    bad += [] if _a_write_through_another_name_is_seen() else [say("workshop: tried fix")[:40]]
    if bad:
        raise RuntimeError(f"an explanation no longer holds on torch {torch.__version__}: {bad}")
    exercises: dict[str, dict] = {}
    errors: set[str] = set()
    ops = inplace_ops()
    for exercise_id in exercise_ids():
        exercises[exercise_id], seen_errors, seen_ops = exercise_entry(exercise_id)
        errors, ops = errors | seen_errors, ops | seen_ops
    return {"format": FORMAT, "made_by": "autograder workshop misconceptions (from references/); do not edit",
            "exercises": exercises, "ops": sorted(ops), "errors": sorted(errors - set(dir(builtins)))}


def text(data: dict) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def write(path: Path = DATA) -> Path:
    """Writes course.json atomically."""
    data = text(build())
    fd, tmp = tempfile.mkstemp(prefix=".course-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(data)
    os.replace(tmp, path)
    return path


def drift(path: Path = DATA, now: dict | None = None) -> list[str]:
    """What differs between the shipped course.json and what the catalogues give now (`now`: build()'s, if
    already made); empty: nothing."""
    shipped = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    now = now if now is not None else build()
    problems = [f"{key}: differs" for key in ("format", "ops", "errors") if shipped.get(key) != now[key]]
    old = shipped.get("exercises", {})
    for exercise_id in sorted(set(old) | set(now["exercises"])):
        if old.get(exercise_id) != now["exercises"].get(exercise_id):
            problems.append(f"{exercise_id}: differs")
    return problems
