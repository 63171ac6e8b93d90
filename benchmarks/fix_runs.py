"""What a run of `autograder blame --fix` costs: forked from the warm interpreter (autograder/blame/fix/warm.py)
against a fresh Python per run, the way every run started before it.

Run: `.venv/bin/python benchmarks/fix_runs.py` (prints the median of 5 runs of a small script each way, in
alternation, after the warm interpreter's own start, and the ratio; then `--fix` on that script end to end
both ways).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.blame.fix import warm  # noqa: E402
from autograder.blame.fix.runs import Program, record  # noqa: E402

SCRIPT = ROOT / "tests" / "blame_cases" / "seed001_script.py"


def one_run(folder: Path) -> float:
    program = Program(str(folder / SCRIPT.name), (), str(folder), {str(folder / SCRIPT.name): SCRIPT.read_text()})
    start = time.perf_counter()
    recording = record(program, "reference", True)
    took = time.perf_counter() - start
    assert recording["error"] is None, recording["error"]
    return took


def whole_fix(folder: Path, cold: bool) -> float:
    shutil.copy(SCRIPT, folder / SCRIPT.name)
    code = "import sys; from autograder.blame.fix import warm, script\n"
    if cold:
        code += "warm.interpreter = lambda environment: None\n"
    code += "sys.exit(script.main(['--fix', sys.argv[1]]))"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, SCRIPT.name], cwd=folder, check=True, capture_output=True,
                   env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return time.perf_counter() - start


def main(rounds: int = 5) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copy(SCRIPT, folder / SCRIPT.name)
        one_run(folder)  # the warm interpreter's start: paid once per --fix, while the first run runs
        forked, fresh = [], []
        started = warm.interpreter
        for _ in range(rounds):
            forked.append(one_run(folder))
            warm.interpreter = lambda environment: None  # type: ignore[assignment]
            fresh.append(one_run(folder))
            warm.interpreter = started
        a, b = statistics.median(fresh), statistics.median(forked)
        print(f"one run: a fresh Python {a:.2f} s; forked from the warm interpreter {b:.2f} s; ratio {a / b:.1f}")
        cold_fix, warm_fix = [], []
        for _ in range(2):
            cold_fix.append(whole_fix(folder, cold=True))
            warm_fix.append(whole_fix(folder, cold=False))
        a, b = min(cold_fix), min(warm_fix)
        print(f"--fix {SCRIPT.name} end to end: fresh Pythons {a:.1f} s; warm {b:.1f} s; "
              f"ratio {a / b:.1f}")


if __name__ == "__main__":
    main()
