"""The workshop's modules import one another without a cycle, at module level or inside a function: the room
(room.py) is what both sides of the server build on, and server.py assembles the application from host.py."""

from __future__ import annotations

import ast
from pathlib import Path

WORKSHOP = Path(__file__).resolve().parent.parent / "autograder" / "workshop"


def _imports(path: Path) -> set[str]:
    """The workshop modules `path` imports, wherever in the module the import is (TYPE_CHECKING included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("autograder.workshop."):
            found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("autograder.workshop."))
    modules = {p.stem for p in WORKSHOP.glob("*.py")}
    return (found & modules) - {path.stem}


def graph() -> dict[str, set[str]]:
    return {p.stem: _imports(p) for p in sorted(WORKSHOP.glob("*.py"))}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle of the graph, one per strongly connected component of two or more modules (or a self-loop)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in edges.get(v, ()):
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_workshop_imports_without_a_cycle():
    assert cycles(graph()) == []


def test_server_and_host_build_on_the_room_and_server_assembles_host():
    edges = graph()
    assert {"room"} <= edges["server"] and {"room"} <= edges["host"]
    assert "host" in edges["server"] and "server" not in edges["host"]
    assert not edges["room"] & {"server", "host"}
    top_level = {node.module for node in ast.parse((WORKSHOP / "server.py").read_text(encoding="utf-8")).body
                 if isinstance(node, ast.ImportFrom) and node.level == 1}
    top_level |= {alias.name for node in ast.parse((WORKSHOP / "server.py").read_text(encoding="utf-8")).body
                  if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None
                  for alias in node.names}
    assert {"host", "room"} <= top_level  # at module level, not inside make_app


def test_the_cycle_finder_sees_a_cycle():
    """The rule can fail: the old shape (host imports server's Base, server imports host) is a cycle."""
    assert cycles({"server": {"host"}, "host": {"server", "views"}, "views": set()}) == [["host", "server"]]
