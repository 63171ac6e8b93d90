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
"""

from __future__ import annotations

import re
import sys
import types
from dataclasses import dataclass
from typing import Any

from .messages import LEAF_INPLACE_ERROR, VERSION_CHECK, VIEW_MODIFIED

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
        return Mark(part, None, f"not predicted; {actual}")
    return Mark(part, right, actual if right else f"you said {guess!r}; {actual}")


def _tensor_mark(tensor: Any, said: re.Match[str]) -> Mark:
    shape = [int(n) for n in said["shape"].split(",") if n.strip()]
    named = f"[{said['type']} {shape}]"
    if said["op"]:
        named = f"output {said['output']} of {said['op']} {named}"
        why = (f"{said['op']} is the saved tensor's grad_fn when backward ran. If an op saved it as its output "
               "(relu, sigmoid, exp, softmax), that is the op that saved it. If an op saved it as its input "
               "(gelu, pow, mul, a linear layer), it is the last recorded in-place op that wrote it, often the "
               "line you look for; or the op that made it, if the write was not recorded (no_grad, an optimizer "
               "step); or AsStrided, for a view whose base was written. It is never the op that saved an input")
    else:
        why = ("no op is named: the saved tensor has no grad_fn. Either it needs no gradient, or it is a leaf "
               "that needs one (a parameter, or a tensor made with requires_grad=True)")
    words = {_op_key(w) for w in re.split(r"[^A-Za-z0-9_]+", tensor)} if isinstance(tensor, str) else set()
    right = (said["op"] is not None and _op_key(said["op"]) in words) or (_given(tensor) and shape in _shapes(tensor))
    return _mark("tensor", tensor, right, f"it is {named}: {why}.")


def marks(prediction: Prediction, outcome: CellRun) -> list[Mark]:
    """Each part of the prediction against what happened, with a short explanation."""
    said = VERSION_CHECK.search(outcome.message) if outcome.error else None
    at_write = AT_THE_WRITE.search(outcome.message) if outcome.error and not said else None
    if outcome.error is None:
        happened = "it ran without an error: nothing backward needed was changed in place after it was saved."
    elif said:
        happened = "it raised the in-place error."
    elif at_write:
        happened = f"it raised at the in-place write itself ({at_write.group(0)})."
    else:
        first = outcome.message.splitlines()[0] if outcome.message else ""
        happened = (f"it raised {outcome.error} ({first[:120]}), not the in-place error; if that was not the "
                    "failure cell, run the failure cell, then this one.")
    out = [_mark("raises", prediction.raises, prediction.raises is (outcome.error is not None), happened)]
    asked_when = _given(prediction.when)  # only three failure cells ask when; the others' templates have no slot
    if at_write:
        if asked_when:
            out.append(_mark("when", prediction.when, prediction.when == "write", "at the write, in forward: "
                             "autograd refuses the in-place op before any backward runs."))
        none = "this error names no saved tensor and no versions: nothing was saved and checked yet."
        out += [_mark(p, getattr(prediction, p), False, none) for p in ("tensor", "found", "expected")
                if _given(getattr(prediction, p))]
        return out
    if said is None:
        return out
    if asked_when:
        out.append(_mark("when", prediction.when, prediction.when == "backward", "at backward: the write itself "
                         "was allowed, and backward found a saved tensor at another version."))
    out.append(_tensor_mark(prediction.tensor, said))
    meaning = {"found": "the version the tensor is at now, when backward reads it",
               "expected": "the version it was at when it was saved"}
    for part in ("found", "expected"):
        guess, actual = getattr(prediction, part), int(said[part])
        out.append(_mark(part, guess, guess == actual, f"it is {actual}: {meaning[part]}."))
    return out


def judgement(heading: str, judged: list[Mark], noun: str, nothing: str) -> tuple[list[str], str]:
    """The lines of a learner's judged guess (one per part: right, wrong or not given), and its count: what
    predict's and diagnose's reveal() print alike."""
    label = {True: "right", False: "wrong", None: "-"}
    lines = [heading, *(f"  {m.part:<9} {label[m.right]:<6} {m.text}" for m in judged)]
    given = [m for m in judged if m.right is not None]
    count = f"{sum(bool(m.right) for m in given)} of {len(given)} {noun} parts right." if given else nothing
    return lines, count


def feedback(prediction: Prediction, outcome: CellRun) -> str:
    """What `reveal()` prints."""
    lines, summary = judgement("Your prediction, against what the failure cell did:", marks(prediction, outcome),
                               "predicted", "Nothing was predicted: next time, fill in predict(...) before you "
                               "run the failure cell.")
    said = VERSION_CHECK.search(outcome.message) if outcome.error else None
    if said:
        bumps = int(said["found"]) - int(said["expected"])
        times = "once" if bumps == 1 else f"{bumps} times"
        summary += (f" found - expected = {bumps}: since it was saved, its version counter moved {times}. Each "
                    "in-place op, `out=` op or `mark_dirty` moves it, on this tensor or on one that shares its "
                    "counter (a view, its base, a detach() alias). One write may move it twice: `t[:, 0] += 1` "
                    "does.")
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


def predict(raises: Any = ..., tensor: Any = None, found: Any = None, expected: Any = None,
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
        print(f"Fill in your prediction: replace the ... after {', '.join(missing)} with your guesses, then "
              "run this cell again. (Nothing here is graded.)")
    else:
        shown = ", ".join(f"{p}={getattr(prediction, p)!r}" for p in PARTS if _given(getattr(prediction, p)))
        print(f"Prediction noted ({shown}). Now run the failure cell, then the cell after it.")


def reveal() -> None:
    """Compares your prediction with what the cell run just before this one did, and prints the result."""
    _watch.skip = True
    if _watch.prediction is None:
        print("No prediction yet: run the predict(...) cell above the failure cell, then the failure cell, "
              "then this one.")
    elif _watch.shell is None:
        print("reveal() compares your prediction with the cell run before it, in Jupyter; run the notebook "
              "there, from the predict(...) cell down.")
    elif _watch.outcome is None:
        print("Run the failure cell (just below your prediction) first, then this cell.")
    else:
        print(feedback(_watch.prediction, _watch.outcome))


class _PredictModule(types.ModuleType):
    """`from autograder import predict` gives this module; calling it makes the prediction."""

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        return predict(*args, **kwargs)


sys.modules[__name__].__class__ = _PredictModule
