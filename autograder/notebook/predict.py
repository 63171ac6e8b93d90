"""`predict(...)` in an exercise notebook: the learner's guess at the error, written before the failure
cell runs; `predict.reveal()` after it says which parts of the guess were right, and why.

    from autograder import predict
    predict(raises=True, tensor="output 0 of Relu", found=1, expected=0)   # before the failure cell
    ...                                                                     # the failure cell
    predict.reveal()                                                        # right after it

A prediction says what PyTorch's message will say: whether it raises, and `when` (at the in-place write
itself, as for a view of `chunk` or a leaf, or at backward, when a saved tensor's version has moved); for
an error at backward, which tensor it names (as the message does: `output N of OP`, where OP is the tensor's
grad_fn when backward ran, else its shape, e.g. `[2, 8, 1]`), and the two versions, the one it is at (`found`)
and the one it was saved at (`expected`). A notebook asks for the parts that fit its failure; the others stay unasked.

In Jupyter, `predict()` watches the cells run after it (an IPython `post_run_cell` callback); `reveal()`
compares the prediction with what the cell run just before it did. It is feedback for the learner only:
the grader runs only answer cells (submission.py), and this module never imports torch.

`predict` is a Guess (below), as `diagnose` is: a plain object the package exports (autograder/__init__.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.messages import LEAF_INPLACE_ERROR, VERSION_CHECK, VIEW_MODIFIED
from ..feedback.wording import say

PARTS = ("raises", "when", "tensor", "found", "expected")
WHEN = ("write", "backward")
"""When the error comes: at the in-place write itself (a view autograd cannot rebase, a leaf), or at
backward (the version check of a saved tensor)."""

AT_THE_WRITE = re.compile(f"{VIEW_MODIFIED}|{LEAF_INPLACE_ERROR.pattern}")
"""The in-place errors raised by the write itself, before any backward: they name no saved tensor and no
versions (the view of a multi-output function or of a custom Function, a leaf)."""

_SHAPE = re.compile(r"[\[(]\s*(\d+(?:\s*,\s*\d+)*)\s*,?\s*[\])]")


@dataclass(frozen=True)
class Prediction:
    """The learner's guess. A part left as `...` is still to fill in; one not asked (None) is not asked for.
    Neither is compared."""

    raises: Any = ...
    tensor: Any = None
    found: Any = None
    expected: Any = None
    when: Any = None

    def missing(self) -> list[str]:
        """Parts still to fill in (`...`): `raises`, and the others the cell asks for when it raises."""
        needed = PARTS if self.raises is not False else PARTS[:1]
        return [p for p in needed if getattr(self, p) is ...]


@dataclass(frozen=True)
class CellRun:
    """What the failure cell did: nothing raised (`error` None), or the error's type name and message."""

    error: str | None = None
    message: str = ""

    @classmethod
    def of(cls, error: BaseException | None) -> CellRun:
        return cls() if error is None else cls(type(error).__name__, str(error))


@dataclass(frozen=True)
class Mark:
    """One part of the prediction, judged: right, wrong, or not given (None)."""

    part: str
    right: bool | None
    text: str


def _given(value: Any) -> bool:
    return value is not ... and value is not None


def _check(raises: Any, tensor: Any, found: Any, expected: Any, when: Any = None) -> None:
    if raises is not ... and not isinstance(raises, bool):
        raise TypeError(f"raises is True or False, not {raises!r}")
    if _given(when) and when not in WHEN:
        raise TypeError(f'when is "write" (the in-place write itself raises) or "backward", not {when!r}')
    for name, version in (("found", found), ("expected", expected)):
        if _given(version) and (isinstance(version, bool) or not isinstance(version, int) or version < 0):
            raise TypeError(f"{name} is a version number (0, 1, 2, ...), not {version!r}")
    shape = isinstance(tensor, (tuple, list)) and all(isinstance(n, int) for n in tensor)
    if _given(tensor) and not isinstance(tensor, str) and not shape:
        raise TypeError(f'tensor is a description such as "output 0 of Relu", or a shape such as (2, 8, 1), '
                        f"not {tensor!r}")


def _op_key(word: str) -> str:
    """`ReluBackward0`, `Relu`, `relu_`, `F.relu` -> `relu`; `LeakyRelu1`, `leaky_relu_` -> `leakyrelu`."""
    return re.sub(r"(backward)?\d*$", "", word.lower().replace("_", ""))


def _shapes(tensor: Any) -> list[list[int]]:
    if isinstance(tensor, (tuple, list)):
        return [list(tensor)]
    return [[int(n) for n in m.group(1).split(",")] for m in _SHAPE.finditer(tensor)]


def _mark(part: str, guess: Any, right: bool, actual: str) -> Mark:
    if not _given(guess):
        return Mark(part, None, say("notebook: not predicted", actual=actual))
    return Mark(part, right, actual if right else say("notebook: you said", guess=repr(guess), actual=actual))


def _tensor_mark(tensor: Any, said: re.Match[str]) -> Mark:
    shape = [int(n) for n in said["shape"].split(",") if n.strip()]
    named = f"[{said['type']} {shape}]"
    if said["op"]:
        named = f"output {said['output']} of {said['op']} {named}"
        why = say("notebook: predict op named", op=said["op"])
    else:
        why = say("notebook: predict no op")
    words = {_op_key(w) for w in re.split(r"[^A-Za-z0-9_]+", tensor)} if isinstance(tensor, str) else set()
    right = (said["op"] is not None and _op_key(said["op"]) in words) or (_given(tensor) and shape in _shapes(tensor))
    return _mark("tensor", tensor, right, say("notebook: it is", actual=named, why=why))


def marks(prediction: Prediction, outcome: CellRun) -> list[Mark]:
    """Each part of the prediction against what happened, with a short explanation."""
    said = VERSION_CHECK.search(outcome.message) if outcome.error else None
    at_write = AT_THE_WRITE.search(outcome.message) if outcome.error and not said else None
    if outcome.error is None:
        happened = say("notebook: predict ran")
    elif said:
        happened = say("notebook: predict raised inplace")
    elif at_write:
        happened = say("notebook: predict raised at write", message=at_write.group(0))
    else:
        first = outcome.message.splitlines()[0] if outcome.message else ""
        happened = say("notebook: predict raised other", error=outcome.error, message=first[:120])
    out = [_mark("raises", prediction.raises, prediction.raises is (outcome.error is not None), happened)]
    asked_when = _given(prediction.when)  # only three failure cells ask when; the others' templates have no slot
    if at_write:
        if asked_when:
            out.append(_mark("when", prediction.when, prediction.when == "write", say("notebook: predict at write")))
        none = say("notebook: predict nothing saved")
        out += [_mark(p, getattr(prediction, p), False, none) for p in ("tensor", "found", "expected")
                if _given(getattr(prediction, p))]
        return out
    if said is None:
        return out
    if asked_when:
        out.append(_mark("when", prediction.when, prediction.when == "backward", say("notebook: predict at backward")))
    out.append(_tensor_mark(prediction.tensor, said))
    meaning = {"found": say("notebook: predict found"), "expected": say("notebook: predict expected")}
    for part in ("found", "expected"):
        guess, actual = getattr(prediction, part), int(said[part])
        out.append(_mark(part, guess, guess == actual, say("notebook: it is", actual=actual, why=meaning[part])))
    return out


def judgement(heading: str, judged: list[Mark], noun: str, nothing: str) -> tuple[list[str], str]:
    """The lines of a learner's judged guess (one per part: right, wrong or not given), and its count: what
    predict's and diagnose's reveal() print alike."""
    label = {True: say("notebook: mark right"), False: say("notebook: mark wrong"), None: "-"}
    lines = [heading, *(f"  {m.part:<9} {label[m.right]:<6} {m.text}" for m in judged)]
    given = [m for m in judged if m.right is not None]
    count = say("notebook: parts right", right=sum(bool(m.right) for m in given), given=len(given), noun=noun) \
        if given else nothing
    return lines, count


def feedback(prediction: Prediction, outcome: CellRun) -> str:
    """What `reveal()` prints."""
    lines, summary = judgement(say("notebook: predict heading"), marks(prediction, outcome),
                               say("notebook: noun predicted"), say("notebook: predict nothing"))
    said = VERSION_CHECK.search(outcome.message) if outcome.error else None
    if said:
        bumps = int(said["found"]) - int(said["expected"])
        times = say("notebook: once") if bumps == 1 else say("notebook: times", count=bumps)
        summary += say("notebook: predict bumps", bumps=bumps, times=times)
    return "\n".join([*lines, summary])


class _Watch:
    """In the learner's kernel: the latest prediction and the outcome of the cell run last since it."""

    def __init__(self) -> None:
        self.prediction: Prediction | None = None
        self.outcome: CellRun | None = None
        self.shell: Any = None
        self.skip = False  # the cell that called predict() or reveal() is not the failure cell

    def attach(self) -> None:
        try:
            from IPython import get_ipython
        except ImportError:
            return
        shell = get_ipython()
        if shell is not None and shell is not self.shell:
            shell.events.register("post_run_cell", self._after_cell)
            self.shell = shell

    def _after_cell(self, result: Any) -> None:
        if self.skip:
            self.skip = False
            return
        self.outcome = CellRun.of(result.error_before_exec or result.error_in_exec)


_watch = _Watch()


def note(raises: Any = ..., tensor: Any = None, found: Any = None, expected: Any = None,
         when: Any = None) -> None:
    """Notes your prediction of the failure cell below: does it raise, `when` ("write": the in-place write
    itself is refused; "backward": backward finds a changed saved tensor), which tensor does the message
    name (`"output 0 of Relu"`, or a shape like `(2, 8, 1)`), and at which versions (found, expected)?"""
    _check(raises, tensor, found, expected, when)
    prediction = Prediction(raises, tensor, found, expected, when)
    _watch.prediction, _watch.outcome, _watch.skip = prediction, None, True
    _watch.attach()
    missing = prediction.missing()
    if missing:
        print(say("notebook: predict fill in", parts=", ".join(missing)))
    else:
        shown = ", ".join(f"{p}={getattr(prediction, p)!r}" for p in PARTS if _given(getattr(prediction, p)))
        print(say("notebook: predict noted", shown=shown))


def reveal() -> None:
    """Compares your prediction with what the cell run just before this one did, and prints the result."""
    _watch.skip = True
    if _watch.prediction is None:
        print(say("notebook: predict none yet"))
    elif _watch.shell is None:
        print(say("notebook: predict needs jupyter"))
    elif _watch.outcome is None:
        print(say("notebook: predict run failure first"))
    else:
        print(feedback(_watch.prediction, _watch.outcome))


class Guess:
    """A learner's guess, noted before the failure cell and judged after it: calling it notes the guess, `reveal`
    judges it (`predict(...)` / `predict.reveal()`, `diagnose(...)` / `diagnose.reveal(fn)`). Neither is graded."""

    def __init__(self, name: str, note: Callable[..., None], reveal: Callable[..., None]) -> None:
        self._name, self._note, self._reveal = name, note, reveal
        self.__doc__ = note.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        return self._note(*args, **kwargs)

    def reveal(self, *args: Any, **kwargs: Any) -> None:
        """Judges the guess noted last (see the note's docstring for what it is compared with)."""
        return self._reveal(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<autograder.{self._name}: {self._name}(...), then {self._name}.reveal()>"


predict = Guess("predict", note, reveal)
