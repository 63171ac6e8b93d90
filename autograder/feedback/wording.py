"""The grader's own sentences, each a named template in one place.

Feedback is prose rendered from facts (an ErrorInfo, a Trial, a culprit report); nothing reads the prose back:
the facts a page, an LMS export or the workshop needs travel as fields of the Result (result.Cause,
TestResult.trial). So any template here may be reworded freely; `tests/test_rewording.py` swaps every one of
them and shows that reports, exports and the workshop still show the same facts.

Each template is a `str.format` string; `say(name, **fields)` fills it. The grading core's templates are
below; every other part of the course that speaks has its area in `catalogue/` (the run, intake, the notebook,
blame, the workshop, reports, platforms, the command line), merged here into the one `TEMPLATES`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping

from . import language
from .catalogue import AREAS, blame, cli, intake, notebook, platforms, reports, run, workshop
from .extract import is_label, is_sentence

CORE: dict[str, str] = {
    # a trial, as a message names it (evidence.label)
    "trial": "scenario '{scenario}', {dtype} on {device}",
    "trial where": ", in {trial}",
    # an error, explained (feedback.describe)
    "not attempted": "Not attempted yet: the answer still raises NotImplementedError.",
    "raised": "Your code raised {type}{where}: {message}",
    "raised where": " at line {line} of your answer",
    "raised code": " (`{code}`)",
    "inplace meaning": (
        "\nWhat it means: an operation saved a tensor in the forward pass, because its backward needs it. Then "
        "something changed that tensor in place (`+=`, `x[...] = ...`, a `*_()` method, `inplace=True`, an "
        "optimizer's step), before backward ran: its version counter moved on. Find that write. The fix keeps "
        "what was saved as it was, and computes the same values."),
    "leaf meaning": (
        "\nWhat it means: a tensor made with `requires_grad=True` (a leaf: a parameter, or a tensor your code was "
        "handed) was changed in place while autograd was recording. If it is a parameter and this is its update, "
        "make the update inside `with torch.no_grad():` (rebinding the name, `p = p - ...`, leaves the model's "
        "parameter as it was). If your code was handed the tensor, do not write into it at all: compute a new one "
        "(`y = x + out` for `x += out`), because the caller's tensor must stay as it was."),
    "culprit": "The line that broke autograd: {culprit} changed a tensor in place{saved}.",
    "culprit saved": " after {saved_by} had saved it for backward",
    "site": "`{op}`",
    "site line": " at line {line}",
    "site file": " of {file}",
    "site code": " (`{code}`)",
    "site unseen": "an operation the locator could not see",
    "fix in words": "How to fix it: {why}",
    "fix": "A fix to try (line {line}): `{before}` -> `{after}`. Why: {why}",
    # an answer's symbol that is not what the exercise defines (spec.Symbol.problem_with)
    "symbol not a class": "`{symbol}` should be a class, but it is a {type}.",
    "symbol not a function": "`{symbol}` should be a function, but it is a {type}.",
    "symbol signature": "`{symbol}` should accept ({want}), but its signature is ({have}).",
    # what stops every check (grade.py)
    "timed out": "Your code did not finish within the time limit: {detail}",
    "crashed": "Your code crashed the process that ran it: {detail}",
    "malformed": "The submission could not be read: {detail}",
    "syntax error": "Your answer has a syntax error at line {line}: {message}{code}",
    "syntax error code": " (`{code}`)",
    "raised while defined": "Your answer cells raised while being defined. {explanation}",
    # a check on hidden inputs (grade.py)
    "hidden": "{what} (on hidden inputs: {trial}).",
    "hidden failed": "This check failed",
    "hidden unjudged": "This check could not judge what your code produced",
    "could not check": "Could not check this: {type}: {message}",
    "message not shown": "its message is not shown, as it may describe the hidden inputs",
    "rest not shown": "(the rest of its message is not shown: it may describe the hidden inputs)",
    "class not shown": "an exception (its class is not shown: your code raised it only on inputs you do not see)",
    # a submission's summary line (grade.py)
    "points": "{score:g}/{max_score:g} points.",
    "summary not attempted": "{head} Not attempted yet: replace the TODO in the answer cells with your fix.",
    "summary blocked": "{head} {blocked}",
    "summary passed": "{head} Every check passed.",
    "summary failed": "{head} See the failed checks below for what to fix.",
    # the feedback a student reads (feedback/text.py)
    "what went wrong": "What went wrong (in {checks}):",
    "met it": "{brief}{trial}: see what went wrong, above.",
    "mark passed": "PASS",
    "mark failed": "FAIL",
    "mark hidden": " (hidden inputs)",
    "self-check footer": (
        "(Self-check: public checks only. The grader runs every check, also on inputs you do not see.)"),
    # observations (checks.py)
    "in trial": "In {trial}: {explanation}",
    "not observed": "In {trial}: `{key}` was not observed (did your code return early or return None?).",
    "mismatch": "{what}: `{key}` {problem}, in {trial}.",
    "step failed": "{what} failed. In {trial}: {explanation}",
    "does not hold": "{failure} (in {trial}).",
    "problem not a tensor": "expected a tensor, got {type}",
    "problem shape": "has shape {got}, expected {want}",
    "problem nan": "contains NaN",
    "problem differs": "differs (max abs error {error:.2e}, relative {relative:.2e}; tolerance rtol={rtol:g})",
    "problem entries": "differs in {count} of {total} entries",
    "problem is": "is {got}, expected {want}",
    # what a check found on hidden inputs, before "hidden" says where (no number, no value)
    "hidden detail": "{what}: {detail}",
    "hidden miss": "{what}: {name} {miss}",
    "hidden step failed": "{what} failed",
    "hidden holds not": "{failure}",
    # what a miss on hidden inputs was, in words with no number (checks.miss_kind)
    "miss no value": "holds no value (for a gradient: its `.grad` was None)",
    "miss not a tensor": "is not a tensor",
    "miss shape": "has the wrong shape",
    "miss differs": "differs from the reference beyond the tolerance",
    "miss value": "is not the expected value",
    "hidden not computed": "{what} was not computed",
    "hidden not observed": "{what} was not observed (did your code return early or return None?)",
    # a check counted only once the answer does what the exercise is about (checks.gated)
    "not counted yet": "Not counted yet: {needs}.",
    # a run stopped by its time limit, wherever it ran (the pool, check(), the command line)
    "stopped after": "stopped after {seconds:g} s (does your code loop forever?)",
}


def _merged() -> dict[str, str]:
    merged = dict(CORE)
    modules = (run, intake, notebook, blame, workshop, reports, platforms, cli)
    assert [m.__name__.rpartition(".")[2] for m in modules] == list(AREAS)
    for module in modules:
        twice = sorted(set(merged) & set(module.TEMPLATES))
        if twice:
            raise ValueError(f"message ids defined twice: {twice}")
        merged.update(module.TEMPLATES)
    return merged


TEMPLATES: dict[str, str] = _merged()


NAMES = frozenset({"scenario", "symbol", "op", "code", "file", "line", "culprit", "saved_by", "name", "key"})
"""Fields that name code or a scenario as it is written: never translated, whatever they hold."""


def say(message_id: str, /, **fields: object) -> str:
    """The template `message_id` in the language chosen now (language.chosen), filled with `fields`
    (positional-only: a field may be called anything)."""
    return say_in(language.chosen(), message_id, **fields)


def say_in(chosen: str, message_id: str, /, **fields: object) -> str:
    """The template `message_id` in the language `chosen`, filled with `fields`. In another language than
    English, a field that is an exercise's own words (a check's description, a rule's label: a sentence or a
    capitalised label, never a lower-case name such as a function's `forward`, nor a field that names code or a
    scenario, NAMES) is said in that language too."""
    if chosen == "en":
        return TEMPLATES[message_id].format(**fields)
    return language.template(message_id, TEMPLATES[message_id], chosen).format(**_said(chosen, fields))


def _said(chosen: str, fields: dict[str, object]) -> dict[str, object]:
    """`fields` for a template in `chosen`: each that is an exercise's own words (a sentence or a capitalised label,
    never a field of NAMES) in that language too; any other value as it is."""
    return {k: language.sentence(v, chosen) if k not in NAMES and isinstance(v, str) and (is_sentence(v) or is_label(v))
            else v for k, v in fields.items()}


class Said(Mapping[Hashable, str]):
    """A mapping of keys to message ids, said when looked up: a table of labels (a status's name, a reason) that is
    in the language chosen when it is read, not when its module was imported."""

    def __init__(self, ids: dict[Hashable, str]) -> None:
        self.ids = ids

    def __getitem__(self, key: Hashable) -> str:
        return say(self.ids[key])

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


def exercise_text(text: str) -> str:
    """An exercise's own text (a check's name or description), in the language chosen now."""
    return language.sentence(text, language.chosen())


def exercise_say(template: str, /, **fields: object) -> str:
    """An exercise's own sentence with values in it: `template` is its English, a `str.format` string written in
    the exercise's module (extract.py takes it into the catalogue, by its English), said in the language chosen now
    and filled with `fields`; as in `say_in`, a field that is an exercise's own words is said in that language too.
    In English it is the template filled with the fields, nothing more."""
    chosen = language.chosen()
    if chosen == "en":
        return template.format(**fields)
    return language.sentence(template, chosen).format(**_said(chosen, fields))
