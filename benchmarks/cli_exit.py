"""What the command line's quick exit saves: the same commands with an ordinary interpreter exit and with
`autograder.cli.run`'s `os._exit` after the results are written (tearing torch's modules down takes about
a second once `torch._dynamo` is loaded, and the grader, which makes the references of the optimizer
exercise, always loads it).

Each pair runs in the same session, interleaved, median of repeats. Run:
`.venv/bin/python benchmarks/cli_exit.py [--repeats N]`. Prints wall seconds and the ratio quick/ordinary.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORDINARY = "import sys; from autograder.cli import main; sys.exit(main(sys.argv[1:]))"
COMMANDS = {
    "list": ["list"],
    "check (data_trap)": ["check", "solutions/06_data_trap.ipynb"],
    "check (rnn_hidden)": ["check", "solutions/04_rnn_hidden.ipynb"],
}


def wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'command':<20} {'ordinary (s)':>12} {'quick (s)':>10} {'quick/ordinary':>15}")
    for name, command in COMMANDS.items():
        ordinary, quick = [], []
        for _ in range(args.repeats):
            ordinary.append(wall([sys.executable, "-c", ORDINARY, *command]))
            quick.append(wall([sys.executable, "-m", "autograder", *command]))
        a, b = statistics.median(ordinary), statistics.median(quick)
        print(f"{name:<20} {a:>12.2f} {b:>10.2f} {b / a:>15.2f}")


if __name__ == "__main__":
    main()
