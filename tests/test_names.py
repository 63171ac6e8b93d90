"""One word, one meaning: no two classes of the package share a name (ARCHITECTURE.md, "Words"). Two classes
called `Report` or `Outcome` made a reader ask which one a function meant; this keeps a new one from coming
back under an old name."""

import ast
from collections import defaultdict

from tests.conftest import ROOT


def classes_by_name() -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted((ROOT / "autograder").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_two_classes_of_the_package_share_a_name():
    found = classes_by_name()
    assert len(found) > 50, "the walk found the package's classes"
    shared = {name: places for name, places in found.items() if len(places) > 1}
    assert not shared, shared
