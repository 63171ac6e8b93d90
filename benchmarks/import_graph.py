"""The package's shape as a newcomer meets it: entries at the top of autograder/ and the import arrows between them.

    .venv/bin/python benchmarks/import_graph.py [CHECKOUT]

A node is one entry of `autograder/`'s listing: a module (`batch.py`) or a folder (`runner/`), as `ls` shows them.
An arrow is an ordered pair of nodes where some module of the first imports some module of the second, at module
level or inside a function (imports under `if TYPE_CHECKING:` are not counted: they are not run). Measured and
nothing else: the workshop's import cycle is held by tests/test_workshop_imports.py, the layers by lint-imports.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def modules(package: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking_blocks(tree: ast.AST) -> set[int]:
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for child in node.body for n in ast.walk(child))
    return skip


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_blocks(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def main() -> None:
    checkout = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    package = checkout / "autograder"
    found = modules(package)
    graph = {name: imports(name, path, set(found)) for name, path in found.items()}
    # a package's __init__ reached through `from . import x` is not an arrow to the package's own folder
    nodes = sorted({p.name for p in package.iterdir() if (p.suffix == ".py" or (p / "__init__.py").exists())
                    and p.name != "__pycache__"})
    arrows = {(top(a), top(b)) for a, targets in graph.items() for b in targets if top(a) != top(b)}
    arrows = {(a, b) for a, b in arrows if a != "__init__" and b != "__init__"}
    print(f"top-level entries: {len(nodes)} ({sum(n.endswith('.py') for n in nodes)} modules, "
          f"{sum(not n.endswith('.py') for n in nodes)} folders)")
    print(f"import arrows between them: {len(arrows)}")
    print(f"modules: {len(found)}")


if __name__ == "__main__":
    main()
