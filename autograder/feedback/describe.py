"""Turns an error into words a student can act on, and into the facts a report needs (a Cause).

The words come from wording.py's templates; the facts (the error's class, the lines of the answer it names,
the culprit's op, tampering) come from the ErrorInfo itself, never from the words. What a grading's words
depend on is one value, an Explainer, passed in by whoever grades (pipeline.judge builds it from the exercise and
the locator's suggestion, blame/suggest/suggest.py): this module, part of the pure core, imports neither the locator
nor libcst, and no switch set elsewhere changes what it says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.messages import INPLACE_ERROR, LEAF_INPLACE_ERROR
from ..core.outcome import ANSWER_FILE, CLASS_NOT_SHOWN, ErrorInfo
from ..core.result import MAX_LINES, Cause
from .wording import say


@dataclass(frozen=True)
class LineFix:
    """A suggested fix of the culprit line: the code before and after (None: the fix is in words only)."""

    line: int
    before: str | None
    after: str | None
    why: str


Suggester = Callable[[dict], "LineFix | None"]
"""Makes a fix suggestion from a culprit report (plain data from a worker), or None."""

SHOW_FIXES = True
"""Whether this copy of the package's feedback proposes literal fixes (a rewrite of the culprit line, the fix in
words, the leaf error's example) where no grading says otherwise: self-study keeps them. `autograder release
--no-fixes` writes False here in the student edition's copy, so that its `check()` and `autograder check` keep
the diagnosis (what, where, why) and leave out every fix; a graded batch or bundle says it with Settings.fixes."""

MEMO_SIZE = 512
"""Errors an Explainer remembers the words of (a grading meets a few; a batch's judge makes one per submission)."""


@dataclass(frozen=True)
class Explainer:
    """How errors are put in words in one grading: whether the exercise lets feedback propose a rewrite of the
    culprit line (spec.Exercise.rewrites), who proposes it (`suggest`; None: no suggestion), and whether the
    class may read any literal fix at all (`fixes`; False for a graded class: the diagnosis stays, what, where
    and why, and no fix, rewrite or words, is proposed). Calling it
    describes an error, remembered in its own memo: the same error recurs across trials and checks, and its
    suggestion costs tens of milliseconds to make."""

    rewrites: bool = True
    suggest: Suggester | None = None
    fixes: bool | None = None
    """None: as this package says (SHOW_FIXES, read when the words are made)."""
    _memo: dict[tuple, str] = field(default_factory=dict, compare=False, repr=False)

    def __call__(self, error: ErrorInfo) -> str:
        """describe(error), remembered."""
        key = (error.type, error.message, error.line, error.code, _frozen(error.culprit))
        text = self._memo.get(key)
        if text is None:
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            text = self._memo[key] = self.describe(error)
        return text

    def describe(self, error: ErrorInfo) -> str:
        """One paragraph: what was raised, where, what it means."""
        if error.not_attempted:
            return say("not attempted")
        where = ""
        if error.line is not None:
            where = say("raised where", line=error.line)
            if error.code:
                where += say("raised code", code=error.code.strip())
        shown = say("class not shown") if error.type == CLASS_NOT_SHOWN else error.type
        text = say("raised", type=shown, where=where, message=first_line(error.message))
        if INPLACE_ERROR.search(error.message):
            text += say("inplace meaning")
            if error.culprit:
                text += "\n" + culprit_text(error.culprit)
                fix = self.fix_text(error.culprit)
                if fix:
                    text += "\n" + fix
        elif LEAF_INPLACE_ERROR.search(error.message):
            text += say("leaf meaning") if self.shows_fixes else say("run: leaf meaning without fix")
        return text

    @property
    def shows_fixes(self) -> bool:
        """Whether these words may propose a literal fix: `fixes`, else the package's SHOW_FIXES."""
        return SHOW_FIXES if self.fixes is None else self.fixes

    def fix_text(self, report: dict, limit: int = 1200) -> str | None:
        """The suggested rewrite of the culprit line (made from the op names and line texts in the report alone:
        the student's code is not run for it); None without one, where the exercise rules rewrites out, or where
        the class is graded without fixes."""
        if not self.rewrites or not self.shows_fixes or self.suggest is None:
            return None
        try:
            suggestion = self.suggest(report)
        except Exception:  # noqa: BLE001 - a suggestion is a bonus; the feedback stands without it
            suggestion = None
        if suggestion is None:
            return None
        if suggestion.after is None or suggestion.before is None:
            text = say("fix in words", why=suggestion.why)
        else:
            before, after = (" / ".join(line.strip() for line in part.splitlines())
                             for part in (suggestion.before, suggestion.after))
            text = say("fix", line=suggestion.line, before=before, after=after, why=suggestion.why)
        return text if len(text) <= limit else text[: limit - 1] + "…"


def _frozen(value: object) -> object:
    """A culprit report (plain data from a worker) as a hashable key of the same content."""
    if isinstance(value, dict):
        return tuple(sorted(((str(k), _frozen(v)) for k, v in value.items()), key=lambda kv: kv[0]))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return (type(value).__name__, value)


def cause(error: ErrorInfo, text: str | None = None) -> Cause:
    """The facts of an error, with its words (`text`, else its words without a suggested rewrite)."""
    culprit = _culprit_site(error.culprit)
    lines: list[int] = []
    if isinstance(error.line, int) and _a_line(error.line) and not error.not_attempted:  # the TODO names no line
        lines.append(error.line)
    if culprit is not None and culprit.get("file") == ANSWER_FILE and _a_line(culprit.get("line")):
        lines.append(culprit["line"])
    op = culprit.get("op") if culprit is not None else None
    return Cause(text=Explainer().describe(error) if text is None else text, error=error.type,
                 lines=tuple(dict.fromkeys(lines))[:MAX_LINES], op=op if isinstance(op, str) else "",
                 tampered=error.type == "TamperError")


def _culprit_site(report: object) -> dict | None:
    site = report.get("culprit") if isinstance(report, dict) else None
    return site if isinstance(site, dict) else None


def _a_line(line: object) -> bool:
    return isinstance(line, int) and not isinstance(line, bool) and 0 < line < 1 << 31


def _site(site: object) -> str:
    """`op` at line N (`code`), from one entry of a locator report, whatever a worker put there."""
    if not isinstance(site, dict):
        return say("site unseen")
    text = say("site", op=str(site.get("op"))[:80])
    if isinstance(site.get("line"), int):
        where = site.get("file")
        text += say("site line", line=site["line"])
        if where not in (None, ANSWER_FILE):
            text += say("site file", file=str(where)[:200])
    if site.get("code"):
        text += say("site code", code=str(site["code"]).strip()[:200])
    return text


def culprit_text(report: dict) -> str:
    """What the culprit locator found, in one sentence."""
    saved = say("culprit saved", saved_by=_site(report.get("saved_by"))) if report.get("saved_by") else ""
    return say("culprit", culprit=_site(report.get("culprit")), saved=saved)


def first_line(message: str, limit: int = 400) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
