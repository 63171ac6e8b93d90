"""The docs name what exists: every module is in ARCHITECTURE.md's Rooms, every path and `module.name` resolves.

A rename leaves stale copies of the old name behind in prose; these tests find them mechanically:
- every module under autograder/ is named, by its path, in ARCHITECTURE.md's "Rooms" table (a row may stand
  for several files with `<id>`, as `exercises/<id>.py` does);
- every `path.py` written in a docstring or comment of the package, in ARCHITECTURE.md or in README.md exists
  (a bare file name somewhere in the repository, a path from the repository's root or from `autograder/`);
- every `module.name` written there, where `module` is a module of the package, names something that module
  defines (a function, a class, a constant, or a submodule).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "autograder"
SKIP = {".git", ".venv", "_build", "__pycache__", "node_modules", ".mypy_cache", ".ruff_cache", ".pytest_cache",
        ".hypothesis"}
PATH = re.compile(r"(?<![\w./-])((?:[\w<>-]+/)*[\w<>-]+\.py)\b")
DOTTED = re.compile(r"(?<![\w.])([a-z_][a-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\b")
# `name.ext` is a file, not a module's member
EXTENSIONS = {"py", "md", "json", "csv", "html", "ipynb", "zip", "txt", "toml", "yml", "yaml", "sh", "png", "cfg",
              "safetensors", "tar", "gz", "log", "pdf", "svg", "js", "css", "lock", "in", "po", "pot", "mo"}
# file names the prose uses as examples of a user's or another program's files, not files of this repository
EXAMPLE_FILES = {"train.py", "SCRIPT.py", "site.py", "mutation_guard.py", "answer.py", "a_b.py", "b.py",
                 "a_b-2.py", "-x.py", "residual_add-ada.py", "data_trap_ada.py", "data_trap_ada-2.py", "hw3.py",
                 "scratch.py",
                 "graph.py", "module.py"}  # torch's own (its line numbers in tracebacks, README "Which torch")


def package_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if not SKIP & set(p.parts))


def rooms_section() -> str:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    start = text.index("## Rooms")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def test_every_module_is_in_the_rooms_table():
    rooms = rooms_section()
    named = set(re.findall(r"`([\w/<>.-]+\.py)`", rooms))
    patterns = [re.compile("^" + re.escape(n).replace(re.escape("<id>"), r"[\w]+") + "$") for n in named]
    missing = []
    for path in package_modules():
        rel = path.relative_to(PACKAGE).as_posix()
        if path.name == "__init__.py" and f"{path.parent.relative_to(PACKAGE).as_posix()}/" in rooms:
            continue  # a package's __init__ is its folder's row
        if path.name in {"__init__.py", "__main__.py"} and path.parent == PACKAGE:
            continue
        if not any(p.match(rel) for p in patterns):
            missing.append(rel)
    assert not missing, f"modules not named in ARCHITECTURE.md's Rooms table: {missing}"


@cache
def repository_files() -> tuple[set[str], set[str]]:
    """(paths from the root, bare file names) of every file in the repository."""
    paths, names = set(), set()
    for p in ROOT.rglob("*"):
        if SKIP & set(p.relative_to(ROOT).parts) or not p.is_file():
            continue
        rel = p.relative_to(ROOT).as_posix()
        paths.add(rel)
        names.add(p.name)
    return paths, names


def path_exists(mention: str) -> bool:
    if "<" in mention or mention in EXAMPLE_FILES:
        return True  # a pattern (`<id>.py`), not a file
    paths, names = repository_files()
    if "/" not in mention:
        return mention in names
    return any(p == mention or p.endswith("/" + mention) for p in paths)


@cache
def module_index() -> dict[str, list[set[str]]]:
    """module basename -> the names each module of that basename defines (top-level defs, assignments, imports,
    class members and submodules)."""
    index: dict[str, list[set[str]]] = {}
    for path in package_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(node.name)
            elif isinstance(node, ast.Assign):
                defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
                defined.update(t.attr for t in node.targets if isinstance(t, ast.Attribute))
            elif isinstance(node, ast.AnnAssign):
                if isinstance(node.target, ast.Name):
                    defined.add(node.target.id)
                elif isinstance(node.target, ast.Attribute):
                    defined.add(node.target.attr)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                defined.update((a.asname or a.name).split(".")[0] for a in node.names)
        if path.name == "__init__.py":
            defined.update(p.stem for p in path.parent.glob("*.py"))
            defined.update(p.name for p in path.parent.iterdir() if (p / "__init__.py").exists())
            name = path.parent.name
        else:
            name = path.stem
        defined.add("py")
        index.setdefault(name, []).append(defined)
    return index


def prose_of_module(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every docstring and comment of a module."""
    src = path.read_text(encoding="utf-8")
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string))
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                out.append((first.lineno, first.value.value))
    return out


def prose() -> list[tuple[str, str]]:
    """(where, text) of all prose the tests hold: the package's docstrings and comments, ARCHITECTURE, README."""
    out = []
    for path in package_modules():
        rel = path.relative_to(ROOT).as_posix()
        out.extend((f"{rel}:{line}", text) for line, text in prose_of_module(path))
    for doc in ("ARCHITECTURE.md", "README.md"):
        for i, line in enumerate((ROOT / doc).read_text(encoding="utf-8").splitlines(), 1):
            out.append((f"{doc}:{i}", line))
    return out


def stale_mentions() -> list[str]:
    index = module_index()
    stale = []
    for where, text in prose():
        for mention in PATH.findall(text):
            if not path_exists(mention):
                stale.append(f"{where}: {mention}")
        for module, name in DOTTED.findall(text):
            if name in EXTENSIONS:
                continue
            if module in index and not any(name in defined for defined in index[module]):
                stale.append(f"{where}: {module}.{name}")
    return stale


def test_every_path_and_module_name_in_the_docs_exists():
    stale = stale_mentions()
    assert not stale, "stale names in docs:\n" + "\n".join(stale)


def test_the_resolver_finds_a_stale_name(tmp_path, monkeypatch):
    """The check itself can fail: the review's example, `submission.CELL_BREAK` (it lives in cells)."""
    index = module_index()
    assert "CELL_BREAK" not in set().union(*index["submission"])
    assert any("CELL_BREAK" in defined for defined in index["cells"])
    assert not path_exists("bundle/cli.py")
    assert path_exists("pool.py") or path_exists("runner/pool.py")
