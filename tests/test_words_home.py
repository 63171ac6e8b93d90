"""Every sentence a learner or a teacher reads from the package comes from one home: `autograder/feedback/`.

A sentence found elsewhere in the package is a string literal (or an f-string's fixed parts) of three words or
more that is not a docstring. It is allowed outside the words' home only where it is not said to a learner or a
teacher, by one of these, each decided here once:
- an exercise's own text (its checks' descriptions, its hints) lives in its spec, `autograder/exercises/<id>.py`,
  one module per exercise: that folder is the second, declared home of words, and the catalogue reads it there;
- the command line's self-description (argparse's `help`, `description`, `epilog`): it documents the command
  as a docstring documents a function;
- a log line, a regular expression, an assertion, and an exception raised for a developer (`GraderError`,
  `TypeError`, `AssertionError`, `NotImplementedError`);
- the strings named in `tests/developer_text/<module>.txt` (one JSON string a line): text for developers that
  no rule above recognises (an argument to a subprocess, a key, a protocol word). A stale entry fails the test.

A new sentence for a learner goes into `autograder/feedback/wording.py` (or a catalogue area it merges) and is
said with `say(id, **fields)`.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "autograder"
ALLOWED = Path(__file__).resolve().parent / "developer_text"
HOMES = [PACKAGE / "feedback", PACKAGE / "exercises"]
DEVELOPER_EXCEPTIONS = {"GraderError", "TypeError", "AssertionError", "NotImplementedError"}
SELF_DESCRIPTION = {"help", "description", "epilog", "metavar", "usage"}
WORD = re.compile(r"[A-Za-z]{2,}")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def is_sentence(text: str) -> bool:
    return " " in text.strip() and len(WORD.findall(text)) >= 3


def _docstrings(tree: ast.AST) -> set[int]:
    """Strings that stand alone as statements: docstrings of modules, classes and functions, and the
    docstrings written under an attribute (a string statement after `LIMIT = 5`). Nobody is told them."""
    return {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def _message_ids() -> set[str]:
    from autograder.feedback.wording import TEMPLATES

    return set(TEMPLATES)


def _call_name(node: ast.Call) -> str:
    func = node.func
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def _exempt_nodes(tree: ast.AST) -> set[int]:
    """Nodes whose strings are not said to a learner or teacher (see the module's docstring)."""
    exempt: set[int] = set()

    def mark(node: ast.AST) -> None:
        exempt.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _call_name(node)
            head = name.split(".")[0]
            last = name.split(".")[-1]
            if head in {"log", "logger", "logging", "LOG"} or name.startswith("re.") or last == "compile":
                mark(node)
            first = node.args[0] if last == "say" and node.args else None
            if last == "say_in" and len(node.args) > 1:
                first = node.args[1]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value in _message_ids():
                mark(first)  # a message id of the catalogue, not a sentence
            for kw in node.keywords:
                if kw.arg in SELF_DESCRIPTION:
                    mark(kw.value)
        elif isinstance(node, ast.Assert):
            mark(node)
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            if _call_name(node.exc).split(".")[-1] in DEVELOPER_EXCEPTIONS:
                mark(node.exc)
    return exempt


def sentences(path: Path) -> list[str]:
    """The sentences of one module that no rule exempts, in order."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree) | _exempt_nodes(tree)
    inside_fstring = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inside_fstring:
            text = node.value
            if text in _message_ids():  # a message id (a Said table's value): a key, said where it is looked up
                continue
        else:
            continue
        if is_sentence(text):
            found.append(text)
    return found


def modules_outside_homes() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if not any(p.is_relative_to(home) for home in HOMES))


def allowed(module: str) -> list[str]:
    path = ALLOWED / f"{module}.txt"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_no_sentence_for_a_learner_lives_outside_the_words_home():
    stray = {}
    for path in modules_outside_homes():
        module = module_name(path)
        left = [text for text in sentences(path) if text not in set(allowed(module))]
        if left:
            stray[module] = left
    assert not stray, (
        "sentences outside autograder/feedback/ (say them with feedback.wording.say, or, if a developer reads "
        f"them, list them in tests/developer_text/<module>.txt): {json.dumps(stray, indent=1)[:4000]}")


def test_every_developer_text_entry_is_still_in_its_module():
    """An allow-list entry whose module or string is gone is stale: it would excuse the next sentence."""
    stale = {}
    for listing in sorted(ALLOWED.glob("*.txt")):
        module = listing.stem
        path = ROOT / (module.replace(".", "/") + ".py")
        if not path.exists():
            path = ROOT / module.replace(".", "/") / "__init__.py"
        if not path.exists():
            stale[module] = ["(no such module)"]
            continue
        present = set(sentences(path))
        gone = [text for text in allowed(module) if text not in present]
        if gone:
            stale[module] = gone
    assert not stale, stale


def test_the_finder_sees_a_sentence_and_lets_a_docstring_by(tmp_path):
    """The rule itself can fail: a planted sentence is found, its exempt neighbours are not."""
    planted = tmp_path / "m.py"
    planted.write_text(
        '"""A docstring of many words."""\n'
        'import logging\n'
        'def f(x):\n'
        '    """Another docstring here."""\n'
        '    logging.info("a log line for developers")\n'
        '    if not x:\n'
        '        raise TypeError("x must be a tensor here")\n'
        '    return f"Your code raised {x} at line two"\n'
        'MESSAGE = "Every check passed for you"\n')
    assert sorted(sentences(planted)) == ["Every check passed for you", "Your code raised {} at line two"]


def _say_calls():
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _call_name(node).split(".")[-1] == "say" and node.args:
                yield path, node


def test_every_message_said_exists_and_gets_the_fields_it_names():
    """`say("id", **fields)`: the id is in the catalogue and the fields are exactly its template's placeholders
    (a renamed field or a typo'd id fails here, not in front of a student)."""
    import string

    from autograder.feedback.wording import TEMPLATES

    problems = []
    calls = 0
    for path, node in _say_calls():
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        calls += 1
        where = f"{path.relative_to(ROOT)}:{node.lineno}"
        if first.value not in TEMPLATES:
            problems.append(f"{where}: no message {first.value!r}")
            continue
        if any(kw.arg is None for kw in node.keywords):
            continue  # **fields: checked where they are built
        named = {field for _, field, _, _ in string.Formatter().parse(TEMPLATES[first.value]) if field}
        named = {field.split(".")[0].split("[")[0] for field in named}
        given = {kw.arg for kw in node.keywords}
        if named != given:
            problems.append(f"{where}: {first.value!r} names {sorted(named)}, given {sorted(given)}")
    assert calls > 20
    assert not problems, problems


def test_every_message_in_the_catalogue_is_said_somewhere():
    """A template nobody says rots unseen (and would be translated for nothing): each id is named by a literal in
    the package, or matches an f-string id (`f"blame: words {kind}"`) with a fixed part of five characters or more."""
    import ast as _ast

    from autograder.feedback.wording import TEMPLATES

    literals: set[str] = set()
    patterns: list[re.Pattern[str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(PACKAGE / "feedback" / "catalogue") or path == PACKAGE / "feedback" / "wording.py":
            continue
        for node in _ast.walk(_ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, _ast.Constant) and isinstance(node.value, str):
                literals.add(node.value)
            elif isinstance(node, _ast.JoinedStr):
                fixed = [v.value if isinstance(v, _ast.Constant) else None for v in node.values]
                if sum(len(f) for f in fixed if f) >= 5:
                    patterns.append(re.compile("".join(re.escape(f) if f is not None else ".+" for f in fixed)))
    for path in sorted(PACKAGE.rglob("*.html")):  # the report's templates say theirs: {{ say("reports: ...") }}
        literals.update(re.findall(r'"([^"{}]+)"', path.read_text(encoding="utf-8")))
    unused = [key for key in TEMPLATES if key not in literals and not any(p.fullmatch(key) for p in patterns)]
    assert not unused, unused
