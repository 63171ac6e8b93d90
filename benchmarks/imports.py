"""What a fresh Python pays to read a notebook: `import nbformat`, side by side, with jsonschema checking IRIs
through rfc3987 (installed by the test extra) and through rfc3987-syntax (what jsonschema imports otherwise,
where jupyter-events or jupyterlab-server brought it: its import builds an Earley grammar).

Every `autograder grade`, `autograder check`, nbclient run and jupyter-book build the tests start pays this
once. Run: `.venv/bin/python benchmarks/imports.py` (it prints the median of 5 fresh processes each, in
alternation, and the ratio).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

# rfc3987 hidden from the import system: jsonschema falls back to rfc3987-syntax, as on a machine without it
WITHOUT = "import sys; sys.modules['rfc3987'] = None; import nbformat; assert 'rfc3987_syntax' in sys.modules"
WITH = "import sys, nbformat; assert 'rfc3987' in sys.modules and 'rfc3987_syntax' not in sys.modules"


def seconds(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main(repeats: int = 5) -> None:
    with_, without = [], []
    for _ in range(repeats):  # alternating, so that a busy moment falls on both
        with_.append(seconds(WITH))
        without.append(seconds(WITHOUT))
    a, b = statistics.median(with_), statistics.median(without)
    print(f"import nbformat, jsonschema through rfc3987:        {a:.2f} s")
    print(f"import nbformat, jsonschema through rfc3987-syntax: {b:.2f} s")
    print(f"ratio: {b / a:.1f}x; saved per process: {b - a:.2f} s")


if __name__ == "__main__":
    main()
