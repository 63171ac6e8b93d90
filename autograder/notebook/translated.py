"""An exercise notebook in another language, made from its English and a catalogue: never a copy to keep in step.

What a notebook says in words is translated: each markdown cell (as a whole), each comment of a code cell (a
block of whole-line comments as one message, a comment after code alone), and each string a code cell prints or
raises with (`print("...")`, `raise NotImplementedError("...")`). The code itself is the English notebook's,
token for token (tests/test_translations.py proves it): names, values, asserts, markers (`### BEGIN SOLUTION`,
the answer cell's first words `# Answer cell (graded)`, which the grader reads). PyTorch's messages, which the
notebook prints as PyTorch gives them, stay in English.

The catalogue is one .po per notebook (exercises/locale/<locale>/LC_MESSAGES/<stem>.po), its entries in the
notebook's order, each with the notebook's stem as context. `scripts/translations` extracts and updates it and
writes the translated notebooks (exercises/zh/, solutions/zh/).
"""

from __future__ import annotations

import ast
import copy
import io
import json
import re
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import nbformat

from ..feedback import language as languages
from ..feedback.wording import say_in

KEPT_COMMENTS = re.compile(r"^(#{2,}\s*(BEGIN|END)\b|#\s*(noqa|type:|pragma)\b|#\s*\(next answer cell\))")
MARKER = re.compile(r"^(#\s*Answer cell(?: \d+ of \d+)? \(graded\)\s*:?\s*)(.*)$", re.IGNORECASE)
SAID = {"print", "NotImplementedError"}


@dataclass(frozen=True)
class Piece:
    """One thing to translate in a cell: its English, and where it sits (markdown cell, comment or string)."""

    kind: str  # "markdown" | "comment" | "string"
    english: str


def pieces(notebook: nbformat.NotebookNode) -> Iterator[Piece]:
    """Everything a notebook says in words, in its order."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and cell.source.strip():
            yield Piece("markdown", cell.source)
        elif cell.cell_type == "code":
            for english, _ in _comments(cell.source):
                yield Piece("comment", english)
            for english, _, _ in _strings(cell.source):
                yield Piece("string", english)


def translated(notebook: nbformat.NotebookNode, language: str,
               lookup: Callable[[str], str | None]) -> nbformat.NotebookNode:
    """`notebook` in `language`: each piece replaced by `lookup(english)` (None: the English stays, and the
    catalogue's check says so first); the setup cell sets the language for the course's words."""
    out = copy.deepcopy(notebook)
    for cell in out.cells:
        if cell.cell_type == "markdown" and cell.source.strip():
            cell.source = lookup(cell.source) or cell.source
        elif cell.cell_type == "code":
            cell.source = _translate_code(cell.source, lookup)
            if "setup" in cell.get("metadata", {}).get("tags", []):
                cell.source = _with_language(cell.source, language_line(language))
    out.metadata["language"] = language
    return out


def language_line(language: str) -> str:
    """What a translated notebook's setup cell adds, so that everything the course says in it is in its language."""
    said = say_in(language, "notebook: language set")
    return f'os.environ["{languages.ENV}"] = "{language}"  # {said}'


def _with_language(source: str, line: str) -> str:
    head = "" if re.search(r"^import os\b", source, re.MULTILINE) else "import os\n"
    return source.rstrip("\n") + "\n" + head + line


def _comments(source: str) -> list[tuple[str, list[tuple[int, int, int]]]]:
    """(English, its places) for each comment: consecutive whole-line comments at one indentation are one block.
    A place is (line index, column of '#', 1 if the comment follows code else 0)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    lines = source.split("\n")
    found: list[tuple[str, list[tuple[int, int, int]]]] = []
    previous: tuple[int, int] | None = None  # (line, column) of the last whole-line comment of the open block
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        row, col = tok.start[0] - 1, tok.start[1]
        text = tok.string
        if KEPT_COMMENTS.match(text):
            previous = None
            continue
        body = text[1:].strip()
        marker = MARKER.match(text)
        if marker:
            body = marker.group(2).strip()
            if not body:
                continue
        whole_line = lines[row][:col].strip() == ""
        if not body:
            previous = None
            continue
        if whole_line and previous is not None and previous == (row - 1, col) and not marker:
            english, places = found[-1]
            found[-1] = (english + "\n" + body, [*places, (row, col, 0)])
        else:
            found.append((body, [(row, col, 0 if whole_line else 1)]))
        previous = (row, col) if whole_line else None
    return found


def _strings(source: str, words_only: bool = True) -> list[tuple[str, tuple[int, int, int, int], bool]]:
    """(English, (line, column, end line, end column), whether it is source) of each string a `print(...)` or a
    `raise NotImplementedError(...)` says (its positional arguments, and the string of a `"...".format(...)` among
    them). A plain string is its value; an f-string (or a string joined to one) is its source, `f"..."`: its
    translation is Python source too, with the same expressions (code_tokens holds it)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in _saying_calls(tree):
        for arg in node.args:
            arg = _formatted(arg)
            if arg.end_lineno is None or arg.end_col_offset is None:
                continue
            place = (arg.lineno - 1, arg.col_offset, arg.end_lineno - 1, arg.end_col_offset)
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                if not words_only or re.search(r"[A-Za-z]{2,}", arg.value):
                    found.append((arg.value, place, False))
            elif isinstance(arg, ast.JoinedStr):
                text = ast.get_source_segment(source, arg)
                words = "".join(v.value for v in arg.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
                if text and (not words_only or re.search(r"[A-Za-z]{2,}", words)):
                    found.append((text, place, True))
    return found


def _translate_code(source: str, lookup: Callable[[str], str | None]) -> str:
    lines = source.split("\n")
    # strings first, from the last: a replacement changes columns after it on its line only
    for english, (row, col, end_row, end_col), is_source in sorted(_strings(source), key=lambda s: s[1],
                                                                   reverse=True):
        chinese = lookup(english)
        if chinese is None:
            continue
        literal = chinese if is_source else json.dumps(chinese, ensure_ascii=False)
        if row == end_row:
            lines[row] = _at(lines[row], col) + literal + lines[row][_col(lines[row], end_col):]
        else:
            lines[row] = _at(lines[row], col) + literal + lines[end_row][_col(lines[end_row], end_col):]
            del lines[row + 1:end_row + 1]
    source = "\n".join(lines)
    lines = source.split("\n")
    for english, places in reversed(_comments(source)):
        chinese = lookup(english)
        if chinese is None:
            continue
        row, col, after_code = places[0]
        head = lines[row][:col]
        marker = MARKER.match(lines[row][col:])
        if after_code:
            lines[row] = head + "# " + chinese.replace("\n", " ")
            continue
        indent = " " * len(head.expandtabs())
        new = [indent + "# " + part if part else indent + "#" for part in chinese.split("\n")]
        if marker:
            new[0] = head + marker.group(1).rstrip() + " " + chinese.split("\n")[0]
        lines[row:places[-1][0] + 1] = new
    return "\n".join(lines)


def _col(line: str, utf8_col: int) -> int:
    """ast's column (UTF-8 bytes) as a str index."""
    return len(line.encode("utf-8")[:utf8_col].decode("utf-8", errors="ignore"))


def _at(line: str, utf8_col: int) -> str:
    return line[:_col(line, utf8_col)]


def code_tokens(source: str) -> list[str]:
    """A code cell's code, without comments and without the strings it says (pieces), as a list of syntax-tree
    dumps: what must be equal in every language. A said f-string keeps its expressions (the words around them
    may move). Where the cell does not parse (IPython magics), its lines without comments."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [line.split("#")[0].strip() for line in source.splitlines()]
    kept = []
    for node in _saying_calls(tree):
        for index, arg in enumerate(node.args):
            said = _formatted(arg)
            if said is not arg and isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute):
                arg.func.value = ast.Constant("<said>")
                continue
            if isinstance(arg, ast.JoinedStr):
                kept += sorted(ast.dump(v.value) for v in arg.values if isinstance(v, ast.FormattedValue))
                node.args[index] = ast.Constant("<said>")
            elif isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                node.args[index] = ast.Constant("<said>")
    return [ast.dump(tree), *kept]


def _saying_calls(tree: ast.AST) -> Iterator[ast.Call]:
    """The calls whose string arguments a cell says (SAID): what is translated, and what code_tokens sets aside."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in SAID:
            yield node


def _formatted(arg: ast.expr) -> ast.expr:
    """The string of `"... {} ...".format(...)`, which is what is said; any other argument as it is."""
    if (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "format"
            and isinstance(arg.func.value, ast.Constant) and isinstance(arg.func.value.value, str)):
        return arg.func.value
    return arg
