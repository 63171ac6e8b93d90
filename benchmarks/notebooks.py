"""How long a workshop waits: each exercise notebook top to bottom, and one `check()` call.

Goals (issue 2): every exercise notebook runs in under 30 s on a laptop CPU; `check()` answers in under
a second. Run: `.venv/bin/python benchmarks/notebooks.py` (kernel start-up included in the notebook time).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def notebook_seconds(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - start


def check_seconds(exercise_id: str, repeats: int = 5) -> tuple[float, float]:
    """First call (cold: torch's first-use costs) and the median of the following calls."""
    from autograder import check
    from autograder.intake.submission import answer_code

    (path,) = (ROOT / "solutions").glob(f"*_{exercise_id}.ipynb")
    namespace: dict = {}
    exec(answer_code(path).code, namespace)
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        result = check(exercise_id, namespace, quiet=True)
        times.append(time.perf_counter() - start)
        assert result.status == "passed", result.output
    return times[0], statistics.median(times[1:])


def main() -> None:
    from autograder.exercises import EXERCISES

    print(f"{'exercise notebook':32s} {'run (s)':>8s} {'check() cold (s)':>17s} {'check() warm (s)':>17s}")
    for exercise in EXERCISES.values():
        path = ROOT / "exercises" / f"{exercise.number:02d}_{exercise.id}.ipynb"
        run = notebook_seconds(path)
        cold, warm = check_seconds(exercise.id)
        print(f"{path.name:32s} {run:8.2f} {cold:17.3f} {warm:17.3f}")


if __name__ == "__main__":
    main()
