"""Two graded folders (`autograder grade ... --out DIR`) of the same submissions, compared field by field.

    python benchmarks/compare_graded.py BEFORE_DIR AFTER_DIR

For a change that must not change any grade: grade one sample class with the checkout before and the one after,
then compare. Prints how many results.json are identical (timings aside), and every field that differs, counted
by (file of the class, check, fields), so a refactoring shows nothing and a deliberate change shows only itself.
Reads only what `autograder grade` wrote on this machine (plain JSON; nothing is unpickled).
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

TIMINGS = ("execution_time",)


def results(folder: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*/results.json"))}


def main(before_dir: str, after_dir: str) -> int:
    before, after = results(Path(before_dir)), results(Path(after_dir))
    same = 0
    kinds: collections.Counter[tuple[str, str, tuple[str, ...]]] = collections.Counter()
    for name in sorted(set(before) | set(after)):
        b = {k: v for k, v in before.get(name, {}).items() if k not in TIMINGS}
        a = {k: v for k, v in after.get(name, {}).items() if k not in TIMINGS}
        if a == b:
            same += 1
            continue
        exercise_file = name.split("__")[-1]
        for key in sorted(set(a) | set(b)):
            if key != "tests" and a.get(key) != b.get(key):
                kinds[(exercise_file, "(submission)", (key,))] += 1
        tb = {t["name"]: t for t in b.get("tests", [])}
        ta = {t["name"]: t for t in a.get("tests", [])}
        for check in sorted(set(ta) | set(tb)):
            x, y = tb.get(check, {}), ta.get(check, {})
            fields = tuple(sorted(f for f in set(x) | set(y) if x.get(f) != y.get(f)))
            if fields:
                kinds[(exercise_file, check, fields)] += 1
    print(f"{same} of {len(set(before) | set(after))} results.json identical (timings aside)")
    for (exercise_file, check, fields), count in sorted(kinds.items()):
        print(f"{count:4d} x {exercise_file}: {check}: {', '.join(fields)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
