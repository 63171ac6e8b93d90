"""How many real reports of the in-place error `autograder blame --fix` repairs, and verifies, unaided.

Each `r*.py` beside this file is a small CPU script made from a public report of the error (its source and
the original code are quoted at its top). For each, on a copy in a temporary folder: check that the copy
raises the error, run `autograder blame --fix --json` on it, and read what it did. A report counts as
"repaired and verified" only when the exit status is 0, the JSON says verified, the copy now runs without
error, and the backup holds the original. Otherwise it got "words only" (exit 3: no rewrite was verified, or
none applies). Then, apart from --fix's own verification, the repaired copy is run once more and the losses
each backward pass starts from are compared with the original program's (every saved tensor kept as saved,
so that it runs): "same values" says whether the kept rewrite left what the program computes as it was.
The `s*.py` scripts are shapes written for issue 34 (a write under no_grad into a buffer, an optimizer step in a
helper, a loop writing the tensor whose slices were saved, a shared module where one line out of place costs
least), not public reports; they run the same way. "Wrong advice" counts a kept rewrite that changes the
numbers, or words printed although --fix tried every rewrite they advise and none worked.

    .venv/bin/python benchmarks/real_reports/run.py [NAME ...]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from autograder.blame.fix.runs import Program, record  # noqa: E402 - the package of this checkout
from autograder.blame.fix.verify import TOLERANCES, _other_values, reference  # noqa: E402


def run(script: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args, script.name], cwd=cwd, capture_output=True, text=True,
                          timeout=1800, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def one(script: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="real-report-") as tmp:
        copy = Path(tmp) / script.name
        shutil.copy(script, copy)
        broken = run(copy, cwd=copy.parent)
        start = time.perf_counter()
        done = run(copy, "-m", "autograder.blame.fix.script", "--fix", "--json", cwd=copy.parent)
        seconds = time.perf_counter() - start
        fix = (json.loads(done.stdout) if done.stdout.strip() else {}).get("fix") or {}
        after = run(copy, cwd=copy.parent)
        backup = copy.with_name(copy.name + ".orig")
        repaired = (done.returncode == 0 and fix.get("verified") is True and after.returncode == 0
                    and backup.exists() and backup.read_bytes() == script.read_bytes())
        withdrawn = (fix.get("words") or "").startswith("No advice")
        why = fix.get("words") if fix.get("kind") == "words" else fix.get("verification")
        return {"name": script.stem, "raised": "modified by an inplace operation" in broken.stderr,
                "status": done.returncode, "repaired": repaired, "kind": fix.get("kind"), "seconds": seconds,
                "why": (why or done.stderr.strip()[-200:])[:150], "culprits": len(fix.get("steps") or [None]),
                "words_shown": fix.get("kind") == "words" and not withdrawn and not repaired,
                "advised_failed": _advised_failed(fix) and not withdrawn and not repaired,
                "same": same_values(script, copy, fix.get("kind")) if repaired else None}


def _advised_failed(fix: dict) -> bool:
    """Printed words whose advice (the rewrite kinds they name) --fix tried and saw fail."""
    tried = {t.get("kind") for t in fix.get("tried") or []}
    return fix.get("kind") == "words" and bool(tried) and any(k in (fix.get("words") or "") for k in tried)


def same_values(original: Path, fixed: Path, kind: str | None) -> bool:
    """Whether the repaired program's losses, pass by pass, are the original program's (float64 where it runs in
    it). A detached state promises truncated backpropagation through time (that is the fix): from the second
    step on, the training differs from the original program's, which backpropagates into the old graph."""
    mode = "truncated" if kind == "detach_state" else "reference"
    ref = reference(Program(str(original), (), str(original.parent)), mode)
    now = record(Program(str(fixed), (), str(fixed.parent)), "plain", ref["float64"])
    return ref["error"] is None and now["error"] is None and len(ref["roots"]) == len(now["roots"]) and (
        _other_values(ref["roots"], now["roots"], TOLERANCES[ref["float64"]]) is None)


def main(names: list[str]) -> int:
    scripts = sorted([*HERE.glob("r[0-9]*.py"), *HERE.glob("s[0-9]*.py")])
    if names:
        scripts = [s for s in scripts if any(n in s.stem for n in names)]
    rows = []
    print(f"{'report':34s} {'raised':>6s} {'exit':>4s} {'result':>22s} {'rewrite':>17s} {'culprits':>8s} "
          f"{'same values':>11s} {'s':>5s}")
    for script in scripts:
        r = one(script)
        rows.append(r)
        result = "repaired and verified" if r["repaired"] else "words only"
        same = "-" if r["same"] is None else "yes" if r["same"] else "NO"
        print(f"{r['name']:34s} {str(r['raised']):>6s} {r['status']:>4d} {result:>22s} {str(r['kind']):>17s} "
              f"{r['culprits']:>8d} {same:>11s} {r['seconds']:5.1f}")
        if r["repaired"]:
            continue
        if r["kind"] == "words":
            print(f"{'':34s} no rewrite applies: {r['why']}")
        else:
            print(f"{'':34s} the {r['kind']} rewrite was tried and undone: {r['why']}")
    repaired = sum(r["repaired"] for r in rows)
    kept = sum(r["same"] is True for r in rows)
    wrong = sum(r["same"] is False for r in rows) + sum(r["advised_failed"] for r in rows)
    print(f"\n{repaired} of {len(rows)} repaired and verified, {len(rows) - repaired} got words only; "
          f"{sum(r['raised'] for r in rows)} of {len(rows)} copies raised the error before the fix; "
          f"{kept} repaired keep the program's numbers; wrong advice: {wrong} "
          f"({sum(r['same'] is False for r in rows)} kept rewrites change the numbers, "
          f"{sum(r['advised_failed'] for r in rows)} words advise what --fix saw fail); "
          f"{sum(r['words_shown'] for r in rows)} printed words, each marked not verified.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
