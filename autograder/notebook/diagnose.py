"""`diagnose(...)` in an exercise notebook: the learner names the culprit line before any tool does;
`diagnose.reveal(fn)` then runs the failing code again under the course's locator, says which parts of the
diagnosis were right, and shows the locator's report (never a fix).

    from autograder import diagnose
    diagnose(line="out += x", saved_by="out = F.relu(self.bn2(self.conv2(out)))")   # your diagnosis
    diagnose.reveal(lambda: block(x).sum().backward())                              # judged, then confirmed

The parts, each a line of code as the notebook writes it (spacing and a trailing comment do not count):
- `line`: the line whose in-place write broke autograd: for the version check's error, the write that moved
  the saved tensor's version; for an error raised by the write itself (a leaf, a view), that write;
- `saved_by`: the line whose op saved the tensor for backward (anomaly mode's warning shows it: its
  innermost line of your code). Not asked where the write itself raised: nothing saved is involved there.

Feedback for the learner only, like `predict`: the grader never runs it. Importing this module does not
import torch; `reveal()` loads the locator (autograder.blame) when it is called.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass
from typing import Any

from ..feedback.wording import say
from .predict import AT_THE_WRITE, Guess, Mark, judgement

PARTS = ("line", "saved_by")


@dataclass(frozen=True)
class Diagnosis:
    """The learner's answer. A part left as `...` is still to fill in; one not asked (None) is not judged."""

    line: Any = ...
    saved_by: Any = None

    def missing(self) -> list[str]:
        return [p for p in PARTS if getattr(self, p) is ...]


@dataclass(frozen=True)
class Found:
    """What the failing code did, as the locator (or, for an error raised by the write, the traceback) saw it:
    the frames of the culprit and of the saver as source lines, innermost first (no saver where the write itself
    raised), and the text that confirms it."""

    culprit: tuple[str, ...]
    saver: tuple[str, ...]
    at_write: bool
    shown: str


def _given(value: Any) -> bool:
    return value is not ... and value is not None


def normalised(line: str) -> str:
    """A line of code without its comment and with single spaces, so that `out+=x  # here` is `out += x`."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(line.strip()).readline)
                  if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                                    tokenize.DEDENT, tokenize.ENDMARKER)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return " ".join(line.split("#")[0].split())
    return " ".join(t.string for t in tokens)


def _check(line: Any, saved_by: Any) -> None:
    for name, value in (("line", line), ("saved_by", saved_by)):
        if _given(value) and (not isinstance(value, str) or not value.strip()):
            raise TypeError(f'{name} is a line of code as the notebook writes it, such as "out += x", not {value!r}')


def _part(part: str, guess: Any, chain: tuple[str, ...], what: str) -> Mark:
    """`guess` against the innermost frame of `chain`; an outer frame of it is named as such."""
    if not chain:
        return Mark(part, None, say("notebook: diagnose unseen"))
    actual = say("notebook: it is", actual=f"`{chain[0]}`", why=what)
    if not _given(guess):
        return Mark(part, None, f"not diagnosed; {actual}")
    said = normalised(guess)
    if said == normalised(chain[0]):
        return Mark(part, True, actual)
    if any(said == normalised(outer) for outer in chain[1:]):
        return Mark(part, False, say("notebook: diagnose further out", guess=guess.strip(), actual=actual))
    return Mark(part, False, say("notebook: you said", guess=f"`{guess.strip()}`", actual=actual))


def marks(diagnosis: Diagnosis, found: Found) -> list[Mark]:
    """Each part of the diagnosis against what the failing code did."""
    if found.at_write:
        out = [_part("line", diagnosis.line, found.culprit, say("notebook: diagnose refused write"))]
        if _given(diagnosis.saved_by):
            out.append(Mark("saved_by", False, say("notebook: diagnose nothing saved")))
        return out
    return [
        _part("line", diagnosis.line, found.culprit, say("notebook: diagnose the write")),
        _part("saved_by", diagnosis.saved_by, found.saver, say("notebook: diagnose the saver")),
    ]


def feedback(diagnosis: Diagnosis, found: Found) -> str:
    """What `reveal()` prints: the judgement, then what confirms it."""
    lines, count = judgement(say("notebook: diagnose heading"), marks(diagnosis, found),
                             say("notebook: noun diagnosed"), say("notebook: diagnose nothing"))
    return "\n".join([*lines, count, "", found.shown])


def _from_report(report: Any) -> Found:
    """A locator's report (autograder.blame.Report): the culprit's and the saver's frames."""
    culprit = report.culprit
    return Found(tuple(s.code for s in culprit.chain if s.code) if culprit is not None else (),
                 tuple(s.code for s in report.saved_by.chain if s.code), False,
                 say("notebook: diagnose report", report=report.text()))


def _from_traceback(error: BaseException) -> Found:
    """An error raised by the write itself: the frames of user code in its traceback, innermost first."""
    from ..blame.locator.frames import Site, UserFrames  # torch: only once the learner asks for the verdict

    user = UserFrames(None)
    tb, sites = error.__traceback__, []
    while tb is not None:
        if user.is_user(tb.tb_frame.f_code):
            sites.append(Site(tb.tb_frame.f_code.co_filename, tb.tb_lineno, tb.tb_frame.f_code.co_name))
        tb = tb.tb_next
    sites.reverse()
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    shown = [say("notebook: diagnose traceback")]
    shown += [f"  {s.function}: {s.code}" for s in sites if s.code]
    shown.append(f"{type(error).__name__}: {first[:200]}")
    return Found(tuple(s.code for s in sites if s.code), (), True, "\n".join(shown))


def run(fn: Any, *args: Any, **kwargs: Any) -> Found | str:
    """Runs `fn(*args, **kwargs)` under the locator: what it did (Found), or why that cannot judge a diagnosis."""
    from ..blame.locator.locator import (  # torch and the locator: loaded when the verdict is asked for
        Locator,
        report_of,
    )

    locator = Locator()
    try:
        with locator:
            fn(*args, **kwargs)
    except RuntimeError as e:
        report = report_of(e) or locator.report
        if report is not None:
            return _from_report(report)
        if AT_THE_WRITE.search(str(e)):
            return _from_traceback(e)
        first = str(e).splitlines()[0][:160] if str(e) else ""
        return say("notebook: diagnose other runtime error", message=first)
    except Exception as e:  # noqa: BLE001 - whatever the learner's code raised is what we say
        return say("notebook: diagnose other error", type=type(e).__name__)
    if locator.report is not None:  # fn caught the error itself
        return _from_report(locator.report)
    return say("notebook: diagnose no error")


class _State:
    diagnosis: Diagnosis | None = None


_state = _State()


def note(line: Any = ..., saved_by: Any = None) -> None:
    """Notes your diagnosis: the `line` whose in-place write broke autograd and, for an error raised in backward,
    the line whose op `saved_by` the tensor. Run it before `diagnose.reveal(...)`: nothing here is graded."""
    _check(line, saved_by)
    _state.diagnosis = Diagnosis(line, saved_by)
    missing = _state.diagnosis.missing()
    if missing:
        print(say("notebook: diagnose fill in", parts=", ".join(missing)))
    else:
        shown = ", ".join(f"{p}={getattr(_state.diagnosis, p)!r}" for p in PARTS
                          if _given(getattr(_state.diagnosis, p)))
        print(say("notebook: diagnose noted", shown=shown))


def reveal(fn: Any = None, *args: Any, **kwargs: Any) -> None:
    """Runs the failing code `fn(*args, **kwargs)` again under the locator, compares your diagnosis with what it
    finds, and prints the result, then the locator's report (or, for an error raised by the write, the
    traceback) to confirm it. It shows no fix."""
    diagnosis = _state.diagnosis
    if diagnosis is None:
        print(say("notebook: diagnose none yet"))
        return
    if diagnosis.missing():
        print(say("notebook: diagnose fill in first", parts=", ".join(diagnosis.missing())))
        return
    if not callable(fn):
        raise TypeError("reveal(fn) runs the failing code again: pass it as a function, e.g. "
                        "diagnose.reveal(lambda: model(x).sum().backward())")
    found = run(fn, *args, **kwargs)
    print(found if isinstance(found, str) else feedback(diagnosis, found))


diagnose = Guess("diagnose", note, reveal)
