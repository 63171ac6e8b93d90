"""Edits of Python source on a concrete syntax tree (libcst), so that formatting and comments stay as written.

A `Source` is one file parsed once: it finds the statement at a line, the blocks around it, and turns a set
of node replacements into new source text and a unified diff. No string surgery: every edit replaces nodes.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping
from typing import Any

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


def unified_diff(before: str, after: str, name: str, context: int = 1) -> str:
    """The unified diff of two texts. Only the span between their common first and last lines is compared
    (a rewrite changes a few lines), so the cost is linear in the file, not quadratic."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    head, tail = _common_ends(old, new)
    start = max(head - context, 0)
    a, b = old[start:len(old) - max(tail - context, 0)], new[start:len(new) - max(tail - context, 0)]
    lines = difflib.unified_diff(a, b, fromfile=name, tofile=name, n=context)
    return "".join(_shifted(line, start) if line.startswith("@@") else line if line.endswith("\n") else line + "\n"
                   for line in lines)


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
    changes = [op for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not changes:
        return 0, "", ""
    last = changes[-1] if changes[-1][2] - changes[0][1] <= span else changes[0]
    i1, j1, i2, j2 = changes[0][1] + head, changes[0][3] + head, last[2] + head, last[4] + head
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
