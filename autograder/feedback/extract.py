"""Babel's extraction methods for the package's words (babel.cfg names them; `scripts/translations` runs them).

Both read the source as a syntax tree and never import it:
- `templates`: each `TEMPLATES` (and wording.py's `CORE`) dict of a catalogue area, message id -> English, as
  `pgettext(message_id, english)`: the id is the context, so two ids with the same English may be translated apart;
- `exercise_texts`: an exercise spec's own text (autograder/exercises/<id>.py): its title, every check's name, every
  template said with `exercise_say("... {field} ...", field=...)`, and every other string of three words or more that
  is not a docstring, as `gettext(english)`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import IO, Any

WORD = re.compile(r"[A-Za-z]{2,}")
TEMPLATE_DICTS = {"TEMPLATES", "CORE"}
SAY = "exercise_say"


def _tree(fileobj: IO[bytes]) -> ast.Module:
    return ast.parse(fileobj.read().decode("utf-8"))


def templates(fileobj: IO[bytes], keywords: Any, comment_tags: Any, options: Any) -> Iterator[tuple]:
    """(line, 'pgettext', (message id, English), comments) for each entry of a templates dict."""
    for node in ast.walk(_tree(fileobj)):
        target: ast.expr
        value: ast.expr | None
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if not (isinstance(target, ast.Name) and target.id in TEMPLATE_DICTS and isinstance(value, ast.Dict)):
            continue
        for key, text in zip(value.keys, value.values):
            if (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(text, ast.Constant)
                    and isinstance(text.value, str)):
                yield text.lineno, "pgettext", (key.value, text.value), [f"message id: {key.value}"]


def is_sentence(text: str) -> bool:
    """Words a learner reads (three words or more), not a key or a name."""
    return " " in text.strip() and len(WORD.findall(text)) >= 3


LABEL = re.compile(r"^(?:[A-Z][a-z]+|[A-Z][A-Za-z]*(?: [\w'.-]+)+)$")
"""A label an exercise's rule is given ("Backward", "Forward output", "BatchNorm running statistics"): capitalised,
one plain word or several; never an observation's key (lower case) nor a class's name (`ResidualBlock`)."""


def is_label(text: str) -> bool:
    return bool(LABEL.match(text)) and len(text) >= 4


def exercise_texts(fileobj: IO[bytes], keywords: Any, comment_tags: Any, options: Any) -> Iterator[tuple]:
    """(line, 'gettext', English, comments) for each check name, each `exercise_say` template and each sentence of
    an exercise's spec."""
    tree = _tree(fileobj)
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    names, said = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == SAY:
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                said.add(id(node.args[0]))
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Check":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                names.add(id(node.args[0]))
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Exercise":
            names.update(id(k.value) for k in node.keywords if k.arg == "title" and isinstance(k.value, ast.Constant))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in docstrings:
            continue
        if id(node) in said:
            yield node.lineno, "gettext", node.value, ["an exercise's sentence: keep each {field} as it is"]
        elif id(node) in names:
            yield node.lineno, "gettext", node.value, ["a check's name, or the exercise's title"]
        elif (is_sentence(node.value) or is_label(node.value)) and "{" not in node.value:
            yield node.lineno, "gettext", node.value, []
