"""The suggestion beside the culprit: a rewrite of the culprit line(s) as a diff with one sentence on why, or
the words when no rewrite applies.

Everything here is a pure function of the locator's JSON report (book/reference/blame.md) and of source text: no torch,
no running. The grader calls `suggest_from_line` with only the culprit's op and line text (a student's code
never runs to make a suggestion); the command line and notebooks read the files, so a module built with
`inplace=True` in `__init__` can be rewritten where it is built.
"""

from __future__ import annotations

import dataclasses
import linecache
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from ...feedback.wording import say
from .construct import construction_rewrites, module_ops
from .cst_edit import Source, changed_lines, names_read, parsed, plain_code, statement, unified_diff
from .culprit import Culprit, Read, Rewrite
from .rewrite import OUT_OF_PLACE, clone_saved, write_rewrites, written_name
from .steps import is_step, later_backward_of, step_rewrites, step_words

MAX_LINE = 400
"""Longer culprit lines are not parsed in the grader: they come from the student's code."""

MAX_NAME = 1000
"""Longer op or file names: the report is not used (a worker's report is the student's to shape)."""

MAX_SITES = 32
"""Modifications and frames of a report that are read: a report is the student's to shape."""


@dataclass(frozen=True)
class Suggestion:
    """One suggestion: a rewrite (`after` set, `diff` shows it) or words only (`after` is None)."""

    why: str
    file: str | None = None
    line: int | None = None
    before: str | None = None
    after: str | None = None
    diff: str = ""
    kind: str = "words"
    contract: str = "same"
    rewrite: Rewrite | None = field(default=None, repr=False, compare=False)
    # for words: the kinds of rewrite they advise (`clone_first` for "write into a copy"); a --fix that tried
    # each of them and saw each fail withdraws the words (fix.py): never advice shown not to work
    advises: tuple[str, ...] = ()

    @classmethod
    def of(cls, rewrite: Rewrite, original: str, c: Culprit) -> Suggestion:
        """The rewrite as the lines it changes and a diff, numbered as the user's file is (`c.at`)."""
        line, before, after = changed_lines(original, rewrite.text, inserted_after=rewrite.kind == "clone_saved")
        if c.renumbered:  # the rules read the lines alone: a diff of the changed lines, at their own numbers
            old, new = before.splitlines(), after.splitlines()
            diff = (f"--- {rewrite.file}\n+++ {rewrite.file}\n@@ -{c.at(line)},{len(old)} +{c.at(line)},{len(new)} @@\n"
                    + "".join(f"-{x}\n" for x in old) + "".join(f"+{x}\n" for x in new))
        else:
            diff = unified_diff(original, rewrite.text, rewrite.file)
        return cls(rewrite.why, rewrite.file, c.at(line), before, after, diff, rewrite.kind, rewrite.contract, rewrite)

    def to_json(self, verified: bool | None = None) -> dict[str, Any]:
        """The --json `fix` object; `verified` is None until `--fix` has run the program again."""
        return {"file": self.file, "line": self.line, "before": self.before, "after": self.after, "why": self.why,
                "verified": verified, "kind": self.kind, "diff": self.diff or None}

    def text(self, status: str | None = None) -> str:
        """The suggestion as shown; `status` says whether it was verified (by default: not yet, --fix would)."""
        if self.after is None:
            return say("blame: words only", why=self.why, status=status or say("blame: words not verified"))
        shown = say("blame: not verified, --fix would") if status is None else status
        return say("blame: suggested fix", status=shown, diff=self.diff.rstrip(), why=self.why)


def culprit_of(report: Any) -> Culprit | None:
    """The rules' view of a report; None when the culprit was not seen. Tolerates any JSON a worker sent."""
    if not isinstance(report, dict) or not isinstance(report.get("culprit"), dict):
        return None
    c: dict[str, Any] = report["culprit"]
    saved: dict[str, Any] = report["saved_by"] if isinstance(report.get("saved_by"), dict) else {}
    if not (isinstance(c.get("op"), str) and isinstance(c.get("file"), str) and isinstance(c.get("line"), int)
            and len(c["op"]) <= MAX_NAME and len(c["file"]) <= MAX_NAME and 0 < c["line"] < 10**9):
        return None
    mods: list[Any] = report["modifications"] if isinstance(report.get("modifications"), list) else []
    on_line = tuple(m["op"] for m in mods[:MAX_SITES] if isinstance(m, dict) and isinstance(m.get("op"), str)
                    and len(m["op"]) <= MAX_NAME and m.get("file") == c["file"] and m.get("line") == c["line"])
    return Culprit(op=c["op"], file=c["file"], line=c["line"],
                   saved_op=_str(saved.get("op")), saved_file=_str(saved.get("file")),
                   saved_line=saved.get("line") if isinstance(saved.get("line"), int) else None,
                   saved_code=_line(without_comment(_str(saved.get("code")))), ops_on_line=on_line,
                   chain=_chain(c.get("chain")), saver_chain=_chain(saved.get("chain")),
                   saved_as=saved.get("saved_as") if saved.get("saved_as") in ("input", "output") else None,
                   line_ran_again=saved.get("line_ran_again") is True,
                   grad_mode=c.get("grad_mode") if isinstance(c.get("grad_mode"), bool) else None)


def rewrites(c: Culprit, read: Read) -> list[Rewrite]:
    """Every candidate rewrite, in the order worth trying."""
    src, stmt = _statement(c, read)
    if src is not None and stmt is not None and is_step(src.code(stmt)):
        return step_rewrites(c, src, stmt, read)
    if c.grad_mode is False:
        # a write made with gradients off into a state the program keeps (a buffer, a power iteration's vector, a
        # queue, running statistics, an EMA teacher) is its intent: it stays as it is, and backward gets a copy
        # where it saved the tensor. Into an activation (`out += x` under no_grad), it is the bug hidden: no
        # rewrite of the line can fix it, and the words say so.
        line = src.code(stmt) if src is not None and stmt is not None else None
        return _unique(clone_saved(c, read)) if writes_kept_state(line) else []
    found = write_rewrites(c, src, stmt) if src is not None and stmt is not None else []
    if module_ops(c.op) and not any(r.kind == "not_inplace" for r in found):
        found += construction_rewrites(c, read)
    copy = clone_saved(c, read)
    # a method writing through another name (a view, an argument): the copy of the saved tensor comes first
    alias = stmt is not None and not c.method.endswith("__setitem__") and not _subscript_write(stmt) and (
        written_name(stmt) not in (None, *_names_in(c.saved_code)))
    return _unique(copy + found if alias or not found else found + copy)


def _unique(found: list[Rewrite]) -> list[Rewrite]:
    unique: dict[tuple[str, str], Rewrite] = {}
    for r in found:
        unique.setdefault((r.file, r.text), r)
    return list(unique.values())


def writes_kept_state(code: str | None) -> bool:
    """Whether the line writes into an attribute of an object (`self.u.copy_(v)`, `self.queue[:, i] = k`,
    `model.bn.running_mean += d`): a state the program keeps across calls, whose write under no_grad is meant.
    A write into a plain name (`out += x`) is into an activation of this forward."""
    import ast

    try:
        tree = ast.parse((code or "").strip())
    except SyntaxError:
        return False
    if len(tree.body) != 1:
        return False
    node = tree.body[0]
    if isinstance(node, ast.AugAssign):
        target: ast.expr = node.target
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func,
                                                                                         ast.Attribute):
        target = node.value.func.value
    else:
        return False
    while isinstance(target, ast.Subscript):
        target = target.value
    return isinstance(target, ast.Attribute)


def words(c: Culprit, code: str | None, read: Read | None = None) -> str:
    """What to do, in one or two sentences, when no rewrite applies (or none was verified)."""
    shown = f"`{code}`" if code else f"`{c.op}`"
    if is_step(code):
        src, stmt = _statement(c, read) if read is not None else (None, None)
        return step_words(c, code or "opt.step()", later_backward_of(c, src, stmt) if src and stmt else None)
    if c.grad_mode is False and writes_kept_state(code):
        return say("blame: words no_grad", shown=shown, saved=c.saved(), at=_saved_at(c))
    if c.grad_mode is False:
        return say("blame: words no_grad activation", shown=shown, saved=c.saved())
    if module_ops(c.op):
        return say("blame: words inplace module", shown=shown, op=c.op, saved=c.saved())
    if c.method == "__setitem__":
        return say("blame: words setitem", shown=shown, saved=c.saved())
    if c.method.endswith("_") and not c.method.startswith("_") and c.method[:-1] in OUT_OF_PLACE:
        return say("blame: words twin", shown=shown, op=c.op, saved=c.saved(), twin=c.method[:-1])
    if c.method.endswith("_") and not c.method.startswith("_"):
        return say("blame: words method", shown=shown, op=c.op, saved=c.saved())
    return say("blame: words other", shown=shown, saved=c.saved())


def suggestions(report: Any, read: Read | None = None) -> tuple[list[Suggestion], Suggestion] | None:
    """(the rewrites as suggestions, the words) for a report; None when it names no culprit."""
    c = culprit_of(report)
    if c is None:
        return None
    return _suggestions(c, without_comment(_str(report["culprit"].get("code"))), read or read_source)


def _suggestions(c: Culprit, code: str | None, read: Read) -> tuple[list[Suggestion], Suggestion]:
    found = []
    for r in rewrites(c, read):
        original = read(r.file)
        if original is not None:
            found.append(Suggestion.of(r, original, c))
    return found, Suggestion(words(c, code, read), c.file, c.at(c.line), code, advises=advised(c, code))


def advised(c: Culprit, code: str | None) -> tuple[str, ...]:
    """The kinds of rewrite `words` advises for this culprit (each is also a rewrite --fix may try)."""
    if is_step(code):
        return ("move_step",) if not c.line_ran_again else ("detach_state",)
    if c.grad_mode is False:
        return ("clone_saved",) if writes_kept_state(code) else ()
    if module_ops(c.op):
        return ("not_inplace",)
    if c.method == "__setitem__":
        return ("clone_first",)
    if c.method.endswith("_") and not c.method.startswith("_") and c.method[:-1] in OUT_OF_PLACE:
        return ("out_of_place", "clone_first")
    if c.method.endswith("_") and not c.method.startswith("_"):
        return ("clone_first", "clone_saved")
    return ("expand", "out_of_place", "clone_first")


def suggest(report: Any, read: Read | None = None) -> Suggestion | None:
    """The suggestion to show: the first rewrite, else the words."""
    found = suggestions(report, read)
    if found is None:
        return None
    return found[0][0] if found[0] else found[1]


def suggest_from_line(report: Any) -> Suggestion | None:
    """For the grader: from the op names and line texts in the report alone (its files are not read).

    The report comes from the worker, so from the student: the cost is bounded whatever it holds. The rules
    read the culprit's line and the saver's (each at most `MAX_LINE` characters) as a text of two lines, not
    the answer's line numbers (a culprit at line 10**6 costs what one at line 3 does), and the words and the
    diff give the answer's numbers back (`Culprit.at`)."""
    c = culprit_of(report)
    if c is None:
        return None
    code = report["culprit"].get("code")
    if not isinstance(code, str) or len(code) > MAX_LINE:
        return _suggestions(c, None, lambda file: None)[1]
    lines = {c.line: code.strip()}
    saved = report.get("saved_by") if isinstance(report.get("saved_by"), dict) else {}
    if saved.get("file") == c.file and isinstance(saved.get("line"), int) and isinstance(saved.get("code"), str):
        if len(saved["code"]) <= MAX_LINE and saved["line"] != c.line:
            lines[saved["line"]] = saved["code"].strip()
    text = "".join(lines[n] + "\n" for n in sorted(lines))
    try:
        parsed(text)
    except Exception:  # noqa: BLE001 - the saved line did not parse alone: use the culprit line only
        lines = {c.line: code.strip()}
        text = lines[c.line] + "\n"
    local = {n: i for i, n in enumerate(sorted(lines), 1)}
    alone = dataclasses.replace(c, line=local[c.line], saved_line=local.get(c.saved_line or 0), chain=(),
                                saver_chain=(), renumbered=tuple((i, n) for n, i in local.items()))
    rewritten, said = _suggestions(alone, without_comment(code), lambda file: text if file == c.file else None)
    if module_ops(c.op) and not any(s.kind == "not_inplace" for s in rewritten):
        return said  # the module was built elsewhere in the answer: say where to look, not a copy
    return rewritten[0] if rewritten else said


def _statement(c: Culprit, read: Read) -> tuple[Source | None, cst.SimpleStatementLine | None]:
    """The culprit's file, parsed, and its statement; (None, None) where either cannot be had."""
    text = read(c.file)
    if text is None:
        return None, None
    try:
        src = parsed(text)
    except Exception:  # noqa: BLE001 - a file or a line libcst cannot parse: words only
        return None, None
    return src, src.statement_at(c.line)


def without_comment(code: str | None) -> str | None:
    """`h = torch.relu(x)` for `h = torch.relu(x)  # saved`: the statement, for a sentence."""
    if code is None or len(code) > MAX_LINE:
        return code
    try:
        stmt = statement(code)
    except Exception:  # noqa: BLE001 - a fragment of a statement: shown as it is
        return code
    return "; ".join(plain_code(s) for s in stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else code


def read_source(file: str) -> str | None:
    """A file's text as Python sees it: linecache knows notebook cells and the grader's `<answer>`."""
    lines = linecache.getlines(file)
    return "".join(lines) if lines else None


def _saved_at(c: Culprit) -> str:
    return say("blame: at line", line=c.at(c.saved_line)) if c.saved_line else ""


def _subscript_write(stmt: cst.SimpleStatementLine) -> bool:
    small = stmt.body[0] if len(stmt.body) == 1 else None
    targets = [small.target] if isinstance(small, cst.AugAssign) else (
        [t.target for t in small.targets] if isinstance(small, cst.Assign) else [])
    return any(isinstance(t, cst.Subscript) for t in targets)


def _names_in(code: str | None) -> set[str]:
    try:
        return names_read(statement(code)) if code else set()
    except Exception:  # noqa: BLE001 - unparsable: no names known
        return set()


def _line(code: str | None) -> str | None:
    """A line of code as the rules use it: None when it is longer than any line they read."""
    return code if code is not None and len(code) <= MAX_LINE else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _chain(value: Any) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, list):
        return ()
    return tuple((s["file"], s["line"]) for s in value[:32]
                 if isinstance(s, dict) and isinstance(s.get("file"), str) and isinstance(s.get("line"), int))
