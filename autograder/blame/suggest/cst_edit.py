"""Edits of Python source on a concrete syntax tree (libcst), so that formatting and comments stay as written.

A `Source` is one file parsed once: it finds the statement at a line, the blocks around it, and turns a set
of node replacements into new source text and a unified diff. No string surgery: every edit replaces nodes.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping
from typing import Any, Literal

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

MAX_NESTING = 40
"""Deeper bracket nesting is not parsed: the grader parses a student's line, and a parser is no place to recurse."""

Replacement = cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel


class Source:
    """One file's text and syntax tree, with positions and parents."""

    def __init__(self, text: str) -> None:
        if _nesting(text) > MAX_NESTING:
            raise ValueError("too deeply nested to parse")
        self.text = text
        self.wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)  # a tree of our own
        self.module = self.wrapper.module
        self.positions = self.wrapper.resolve(PositionProvider)
        self.parents = self.wrapper.resolve(ParentNodeProvider)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    def statement_at(self, line: int) -> cst.SimpleStatementLine | None:
        """The innermost simple statement (one line of code, or one statement over several lines) at `line`."""
        best, span = None, None
        for node, where in self.positions.items():
            if isinstance(node, cst.SimpleStatementLine) and where.start.line <= line <= where.end.line:
                size = where.end.line - where.start.line
                if span is None or size < span:
                    best, span = node, size
        return best

    def enclosing(self, node: cst.CSTNode, kinds: tuple[type, ...]) -> list[cst.CSTNode]:
        """The ancestors of `node` of the given kinds, innermost first."""
        found, current = [], self.parents.get(node)
        while current is not None:
            if isinstance(current, kinds):
                found.append(current)
            current = self.parents.get(current)
        return found

    def nodes(self, kind: type) -> list[Any]:
        """Every node of a kind, in source order."""
        found = [n for n in self.positions if isinstance(n, kind)]
        return sorted(found, key=lambda n: (self.positions[n].start.line, self.positions[n].start.column))

    def edited(self, replacements: Mapping[cst.CSTNode, Replacement]) -> str:
        """The source with each node (of this tree) replaced; everything else byte for byte as it was."""
        return self.module.visit(_Replace(replacements)).code


@functools.lru_cache(maxsize=8)
def parsed(text: str) -> Source:
    """The same file is read by several rules: parse it once (a Source is never changed, only read)."""
    return Source(text)


DIFFED = 400
"""Lines of each side that difflib matches at once: its matching is quadratic in the lines it compares (a run of
blank lines is its worst case: 8,000 took 23 s), so a longer changed span is read a window at a time."""


def unified_diff(before: str, after: str, name: str, context: int = 1) -> str:
    """The unified diff of two texts. Only the span between their common first and last lines is compared
    (a rewrite changes a few lines), and difflib matches at most DIFFED lines of each side at once, so the
    cost is linear in the texts: a longer span is diffed as its first change and its last, with the lines
    between them unchanged (or, where they are not, as one change of the whole span: a true diff, if not the
    shortest)."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    head, tail = _common_ends(old, new)
    if len(old) - tail - head > DIFFED or len(new) - tail - head > DIFFED:
        return _long_diff(old, new, head, tail, name, context)
    start = max(head - context, 0)
    a, b = old[start:len(old) - max(tail - context, 0)], new[start:len(new) - max(tail - context, 0)]
    lines = difflib.unified_diff(a, b, fromfile=name, tofile=name, n=context)
    return "".join(_shifted(line, start) if line.startswith("@@") else line if line.endswith("\n") else line + "\n"
                   for line in lines)


def _long_diff(old: list[str], new: list[str], head: int, tail: int, name: str, context: int) -> str:
    """unified_diff of a changed span longer than DIFFED lines, in time linear in it."""
    a_end, b_end = len(old) - tail, len(new) - tail
    first_a, first_b = _first_change(old[head:a_end], new[head:b_end])
    last_a, last_b = _first_change(old[head:a_end][::-1], new[head:b_end][::-1])
    i, j = head + first_a, head + first_b  # where the first change ends
    k, m = a_end - last_a, b_end - last_b  # where the last one starts
    opcodes: list[Opcode]
    if i <= k and j <= m and k - i == m - j and old[i:k] == new[j:m]:
        opcodes = [("replace", head, i, head, j), ("equal", i, k, j, m), ("replace", k, a_end, m, b_end)]
    else:
        opcodes = [("replace", head, a_end, head, b_end)]
    matcher = _Opcodes([("equal", 0, head, 0, head), *opcodes, ("equal", a_end, len(old), b_end, len(new))])
    out = [f"--- {name}\n", f"+++ {name}\n"]
    for group in matcher.get_grouped_opcodes(context):
        out.append(f"@@ -{_range(group[0][1], group[-1][2])} +{_range(group[0][3], group[-1][4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + line for line in old[i1:i2])
            else:
                out.extend("-" + line for line in old[i1:i2])
                out.extend("+" + line for line in new[j1:j2])
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


class _Opcodes(difflib.SequenceMatcher):
    """difflib's grouping of opcodes into hunks, of opcodes given (it matches nothing itself)."""

    def __init__(self, opcodes: list[Opcode]) -> None:
        super().__init__(None, [], [])
        self._given = opcodes

    def get_opcodes(self) -> list[Opcode]:
        return self._given


def _range(start: int, stop: int) -> str:
    """A hunk's range as difflib writes it (1-based; `start,0` after the line before an empty one)."""
    length = stop - start
    return f"{start + 1}" if length == 1 else f"{start if not length else start + 1},{length}"


def _first_change(old: list[str], new: list[str]) -> tuple[int, int]:
    """Where the first change of two line lists that differ at their first line ends (in each), found by
    difflib in their first DIFFED lines (a change that runs past them ends there)."""
    a, b = old[:DIFFED], new[:DIFFED]
    for tag, _, i2, _, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            return i2, j2
    return len(a), len(b)


def _shifted(hunk: str, by: int) -> str:
    """A hunk header of a diff of lines `by + 1` on, numbered as in the whole file."""
    def shift(m: re.Match) -> str:
        first = int(m.group(2))
        return f"{m.group(1)}{first + by if first or by else 0}"
    return re.sub(r"([-+])(\d+)", shift, hunk, count=2)


def _common_ends(old: list[str], new: list[str]) -> tuple[int, int]:
    """How many first lines, and then how many last lines, the two lists share."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


def changed_lines(before: str, after: str, inserted_after: bool = False, span: int = 6) -> tuple[int, str, str]:
    """(first line, 1-based; the old lines; the new lines) spanning the changes (the first one alone when they
    are more than `span` lines apart: the diff shows the rest). A pure insertion takes the line it is inserted
    before (or after, with `inserted_after`) along, so that `before` is never empty. Linear in the file: only
    the span between the common first and last lines is compared."""
    whole_old, whole_new = before.splitlines(), after.splitlines()
    head, tail = _common_ends(whole_old, whole_new)
    old, new = whole_old[head:len(whole_old) - tail], whole_new[head:len(whole_new) - tail]
    if not old and not new:
        return 0, "", ""
    # the changes begin at the span's first line and end at its last: within `span` lines, they are one
    if len(old) <= span:
        i1, j1, i2, j2 = head, head, head + len(old), head + len(new)
    else:  # else the first alone, whose end difflib finds in a bounded window (linear in the file)
        first_a, first_b = _first_change(old, new)
        i1, j1, i2, j2 = head, head, head + first_a, head + first_b
    if i1 == i2 and inserted_after and i1 > 0:
        i1, j1 = i1 - 1, j1 - 1
    elif i1 == i2 and i2 < len(whole_old):
        i2, j2 = i2 + 1, j2 + 1
    return i1 + 1, "\n".join(whole_old[i1:i2]), "\n".join(whole_new[j1:j2])


MAX_STATEMENT = 4000
"""Characters of one statement parsed alone (a line of a report is at most a few hundred)."""


def statement(code: str) -> cst.BaseStatement:
    """One statement, parsed; ValueError where it is too long or too deeply nested for a parser to be safe."""
    if len(code) > MAX_STATEMENT or _nesting(code) > MAX_NESTING:
        raise ValueError("too long or too deeply nested to parse")
    return cst.parse_statement(code)


def expression(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def plain_code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def walk(node: cst.CSTNode, kind: type | tuple[type, ...]) -> list:
    """Every node of a kind under `node` (itself included), in order."""
    found = []

    class _Collect(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if isinstance(n, kind):
                found.append(n)
            return True

    node.visit(_Collect())
    return found


def names_read(node: cst.CSTNode) -> set[str]:
    """The code of every name and attribute chain read in `node`: `h`, `self.hidden`, `self`."""
    return {plain_code(n) for n in walk(node, (cst.Name, cst.Attribute))}


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: Mapping[cst.CSTNode, Replacement]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node: Any, updated_node: Any) -> Any:
        return self.replacements.get(original_node, updated_node)


def _nesting(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth = max(depth - 1, 0)
    return deepest
