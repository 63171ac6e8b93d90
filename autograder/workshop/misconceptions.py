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
    chapter: str  # a file of book/chapters
    proof: Callable[[], bool]


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
    # written for one catalogue entry, where a keyword of its name would say something else
    ("rnn_hidden", "detaches h but not c"): Explanation(
        re.compile(""), True, say("workshop: explain h but not c"), "08_case_studies", _c_carries_the_last_graph),
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
    read = (_chapter(found[0].chapter) if found and BUG not in names
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
    bad = [e.text[:40] for e in (*EXPLANATIONS, *LABELS.values()) if not e.proof()]
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
