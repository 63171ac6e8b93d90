"""Grading the same class with nbgrader's `autograde` and with ours, side by side in one run.

Goals (issue 3, "Grade untrusted code safely and fast"): at least 20x nbgrader's throughput on the same
submissions; at most 100 ms per submission beyond the submission's own compute with `--jobs 2` on 2 cores;
1,200 submissions in under 2 minutes.

What each side does with each submission (a notebook of samples/class/, 6 students x 7 exercises):
- nbgrader 0.9 (`nbgrader autograde ASSIGNMENT --force`, installed by this script into a venv of its own
  under ~/.cache/inplace-course-bench/, with torch and this package) executes the whole notebook top to
  bottom in a fresh Jupyter kernel, as it always does: the imports, the failure cell (which raises by
  design; nbgrader executes with allow_errors), the student's answer cell, and one autograded test cell
  that runs our public checks, `check(ID, quiet=True)`, and prints the score as nbgrader partial credit.
  nbgrader grades one notebook at a time; it has no option to run several at once.
- ours (`autograder grade --jobs 2 --device cpu`) takes only the answer cells and runs them in a warm,
  sandboxed worker (a fork of a zygote that has imported torch), on the public and the hidden trials
  (more checks than the test cell above), and judges them against a reference computed once per exercise.
The course folder for nbgrader is built in a temporary folder: source/ holds the exercise notebooks with
nbgrader cell metadata (answer cell = solution cell, check cell = autograded test cell worth 10 points),
`nbgrader generate_assignment` registers them in the gradebook, and submitted/<student>/ holds each
student's own notebook with the same metadata added. Files nbformat cannot read (frank's truncated and
empty ones) are copied as they are. Times are end to end: each command's wall clock, start-up included.

Ours is run twice, on the class and on `--many` copies of it (1,200; same files under other names), so its
wall time splits into a fixed start-up (imports, the sandboxed workers, the references) and a marginal cost
per submission: (wall_many - wall_class) / (n_many - n_class). nbgrader's cost is counted per notebook it
graded: it gives up on a student's whole assignment at the first notebook it cannot read (frank's).

"Beyond its own compute": the pool does not record a job's own compute separately, so it is estimated as
(wall x jobs / n) - c, with the marginal cost in place of wall / n (and, start-up included, the 1,200 run's
wall / n), where c is the mean in-process cost of the same grading work: `batch.grade_file` on
the same file with `InProcessRunner` (no worker, no sandbox, no serialisation) and the per-exercise
references already made, as the batch has them; second of two passes, torch on one thread as in the
workers. Submissions our run graded as crashed or timed out (they kill or hang the process that runs
them) are not run in process and count as zero compute, which overstates the overhead. The rest of
(wall x jobs / n) is what the pool adds: start-up, forks, sandbox, job and report files, scheduling.

Run: `.venv/bin/python benchmarks/nbgrader_vs_ours.py` (full class and 1,200 copies; 10 to 15 minutes,
most of it nbgrader) or `--quick` (two students, no 1,200 run). `--skip-nbgrader` measures ours only.
Prints markdown tables. The machine's load average is printed with the numbers: other work on the
machine slows both sides.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.batch import Preparations, Settings, grade_file  # noqa: E402
from autograder.exercises import EXERCISES  # noqa: E402
from autograder.intake.discover import find_submissions, submission_name  # noqa: E402
from autograder.intake.submission import is_answer_cell  # noqa: E402
from autograder.runner import InProcessRunner  # noqa: E402

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "inplace-course-bench"
VENV = CACHE / "nbgrader-venv"
REQUIREMENTS = ("nbgrader==0.9.6", "torch==2.13.0")
"""What the nbgrader venv holds besides this package (editable): the marker file records it."""
ASSIGNMENT = "inplace"
CLASS = ROOT / "samples" / "class"
QUICK_STUDENTS = ("ada", "frank")
POINTS = 10


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(command: list, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in command], text=True, capture_output=True, **kwargs)


def venv_env() -> dict[str, str]:
    """nbgrader runs `alembic` from PATH, and its kernels must be the venv's Python."""
    return {**os.environ, "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(VENV)}


def checked(command: list, **kwargs) -> subprocess.CompletedProcess:
    done = run(command, **kwargs)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(map(str, command))}\n{done.stdout[-3000:]}"
                         f"\n{done.stderr[-3000:]}")
    return done


# --- nbgrader's environment and course folder -------------------------------------------------------

def ensure_venv() -> Path:
    """nbgrader, torch and this package in a venv of their own, made once and reused."""
    marker = VENV / "bench-requirements.json"
    wanted = {"requirements": list(REQUIREMENTS), "package": str(ROOT)}
    if (VENV / "bin" / "nbgrader").exists() and marker.exists() and json.loads(marker.read_text()) == wanted:
        return VENV
    print(f"installing {', '.join(REQUIREMENTS)} and this package into {VENV} (once) ...", flush=True)
    shutil.rmtree(VENV, ignore_errors=True)
    VENV.parent.mkdir(parents=True, exist_ok=True)
    checked([sys.executable, "-m", "venv", VENV])
    pip = [VENV / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    checked([*pip, *REQUIREMENTS])
    checked([*pip, "-e", ROOT])
    marker.write_text(json.dumps(wanted))
    return VENV


def check_cell_index(nb: nbformat.NotebookNode, exercise: str) -> int | None:
    """The exercise notebook's check cell: the code cell that calls check("<id>")."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and f'check("{exercise}")' in cell.source:
            return i
    return None


def test_cell_source(exercise: str) -> str:
    return (
        "from autograder import check\n\n"
        f'_result = check("{exercise}", quiet=True)\n'
        f"# nbgrader partial credit: a test cell whose last value is a number scores that many points\n"
        f"_result.score * {POINTS} / _result.max_score\n"
    )


def with_nbgrader_metadata(nb: nbformat.NotebookNode, exercise: str) -> nbformat.NotebookNode:
    """The answer cell becomes nbgrader's solution cell, the check cell its autograded test cell."""
    for cell in nb.cells:
        if is_answer_cell(cell):
            cell.metadata["nbgrader"] = {"schema_version": 3, "grade": False, "solution": True, "locked": False,
                                         "grade_id": f"answer_{exercise}", "task": False}
            break  # one solution cell per notebook: further answer cells stay plain
    index = check_cell_index(nb, exercise)
    if index is not None:
        cell = nb.cells[index]
        cell.source = test_cell_source(exercise)
        cell.outputs, cell.execution_count = [], None
        cell.metadata["nbgrader"] = {"schema_version": 3, "grade": True, "solution": False, "locked": True,
                                     "grade_id": f"check_{exercise}", "points": POINTS, "task": False}
    return nb


def exercise_of(path: Path) -> str:
    named = [e for e in EXERCISES if e in path.stem]
    assert len(named) == 1, path
    return named[0]


def build_course(base: Path, students: list[str], nbgrader: Path) -> Path:
    """An nbgrader course folder: config, source notebooks registered in the gradebook, submissions."""
    course = base / "course"
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.course_id = 'inplace-course'\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.db_url = 'sqlite:///{course}/gradebook.db'\n"
    )
    for exercise in EXERCISES.values():
        name = f"{exercise.number:02d}_{exercise.id}.ipynb"
        nb = nbformat.read(ROOT / "exercises" / name, as_version=4)
        nbformat.write(with_nbgrader_metadata(nb, exercise.id), course / "source" / ASSIGNMENT / name)
    for student in students:
        checked([nbgrader, "db", "student", "add", student], cwd=course, env=venv_env())
    checked([nbgrader, "generate_assignment", ASSIGNMENT, "--force"], cwd=course, env=venv_env())
    for student in students:
        target = course / "submitted" / student / ASSIGNMENT
        target.mkdir(parents=True)
        for path in sorted((CLASS / student).glob("*.ipynb")):
            try:
                nb = nbformat.read(path, as_version=4)
            except Exception:  # noqa: BLE001 - a broken file goes to nbgrader as the student handed it in
                shutil.copy(path, target / path.name)
                continue
            nbformat.write(with_nbgrader_metadata(nb, exercise_of(path)), target / path.name)
    return course


def nbgrader_scores(course: Path, nbgrader: Path) -> dict[str, float]:
    """Each student's total for the assignment, from `nbgrader export` (its CSV)."""
    checked([nbgrader, "export", "--to", course / "grades.csv"], cwd=course, env=venv_env())
    with open(course / "grades.csv", newline="") as f:
        return {row["student_id"]: float(row["score"] or 0) for row in csv.DictReader(f)}


def time_nbgrader(base: Path, students: list[str]) -> dict:
    venv = ensure_venv()
    nbgrader = venv / "bin" / "nbgrader"
    course = build_course(base, students, nbgrader)
    n = sum(1 for _ in (course / "submitted").rglob("*.ipynb"))
    before = loadavg()
    start = time.perf_counter()
    done = run([nbgrader, "autograde", ASSIGNMENT, "--force"], cwd=course, env=venv_env())
    wall = time.perf_counter() - start
    log = course / "nbgrader-autograde.log"
    log.write_text(done.stdout + done.stderr)
    executed = sum(1 for _ in (course / "autograded").rglob("*.ipynb")) if (course / "autograded").exists() else 0
    return {"n": n, "wall": wall, "rc": done.returncode, "executed": executed, "load": (before, loadavg()),
            "scores": nbgrader_scores(course, nbgrader), "log": log}


# --- ours ------------------------------------------------------------------------------------------

def time_ours(paths: list[Path], out: Path, jobs: int) -> dict:
    n = len(find_submissions(paths))
    before = loadavg()
    start = time.perf_counter()
    done = run([sys.executable, "-m", "autograder", "grade", *paths, "--out", out, "--jobs", jobs,
                "--device", "cpu", "--quiet"], env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"autograder grade failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    with open(out / "gradebook.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return {"n": n, "wall": wall, "rc": done.returncode, "rows": rows, "load": (before, loadavg())}


def in_process_compute(files: list[Path], roots: list[Path], statuses: dict[str, str]) -> dict[Path, float]:
    """Seconds each file's grading takes in this process, without a worker (see the module docstring)."""
    import torch

    torch.set_num_threads(1)
    settings = Settings(devices=("cpu",))
    references = Preparations(settings)
    for exercise in EXERCISES.values():
        references.get(exercise)
    runner = InProcessRunner()
    seconds: dict[Path, float] = {}
    for _ in range(2):  # the first pass pays torch's lazy imports once, as the zygote does before any job
        for path in files:
            name = submission_name(path, roots)
            if statuses.get(name) in ("crashed", "timed_out"):
                seconds[path] = 0.0
                continue
            start = time.perf_counter()
            grade_file(path, name, settings, runner, references)
            seconds[path] = time.perf_counter() - start
    return seconds


def replicate(originals: list[Path], target: Path, count: int) -> list[Path]:
    """`count` submissions: copies of the class's files under distinct names, contents unchanged."""
    made = []
    for i in range(count):
        source = originals[i % len(originals)]
        copy = target / f"copy{i // len(originals):03d}" / source.parent.name / source.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, copy)
        made.append(source)
    return made


# --- report ----------------------------------------------------------------------------------------

def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help=f"students {', '.join(QUICK_STUDENTS)} only, no large run")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--many", type=int, help="submissions in the large run (default 1200; 0 or --quick: none)")
    p.add_argument("--skip-nbgrader", action="store_true", help="measure ours only")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    args = p.parse_args()
    students = list(QUICK_STUDENTS) if args.quick else sorted(d.name for d in CLASS.iterdir() if d.is_dir())
    many = args.many if args.many is not None else 0 if args.quick else 1200
    base = Path(tempfile.mkdtemp(prefix="nbgrader-vs-ours-"))
    try:
        return report(base, students, args.jobs, many, not args.skip_nbgrader)
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


def report(base: Path, students: list[str], jobs: int, many: int, with_nbgrader: bool) -> int:
    for student in students:  # the students graded, in a folder of their own (names: student__file)
        shutil.copytree(CLASS / student, base / "class" / student)
    roots = [base / "class"]
    print(f"{os.cpu_count()} CPUs; load average at start {loadavg()}; students: {', '.join(students)}", flush=True)
    nbg = time_nbgrader(base, students) if with_nbgrader else None
    if nbg:
        print(f"nbgrader: {nbg['n']} submissions in {nbg['wall']:.1f} s, exit {nbg['rc']}, {nbg['executed']} "
              f"notebooks autograded (log: {nbg['log']})", flush=True)
    ours = time_ours(roots, base / "ours", jobs)
    print(f"ours: {ours['n']} submissions in {ours['wall']:.1f} s", flush=True)
    files = find_submissions(roots)
    statuses = {r["submission"]: r["status"] for r in ours["rows"]}
    compute = in_process_compute(files, roots, statuses)
    mean_compute = sum(compute.values()) / len(files)
    print(f"in-process compute measured ({mean_compute * 1000:.0f} ms a submission)", flush=True)
    big = None
    if many:
        copied = replicate(files, base / "many", many)
        big = time_ours([base / "many"], base / "ours-many", jobs)
        big["compute"] = sum(compute[p] for p in copied) / len(copied)
        print(f"ours: {big['n']} submissions in {big['wall']:.1f} s", flush=True)

    print("\n| grader | submissions | graded | wall (s) | s per graded submission | graded per s "
          "| load average before -> after |")
    print("|---|---|---|---|---|---|---|")
    rows = ([("nbgrader 0.9.6 `autograde` (one at a time)", nbg, nbg["executed"])] if nbg else [])
    rows.append((f"ours, `--jobs {jobs}`", ours, ours["n"]))
    if big:
        rows.append((f"ours, `--jobs {jobs}`, copies of the class", big, big["n"]))
    for label, r, graded in rows:
        per = r["wall"] / graded if graded else float("nan")
        print(f"| {label} | {r['n']} | {graded} | {r['wall']:.1f} | {per:.3f} | {1 / per:.2f} "
              f"| {r['load'][0]} -> {r['load'][1]} |")
    nbg_per = nbg["wall"] / nbg["executed"] if nbg and nbg["executed"] else None
    print()
    if nbg_per:
        print(f"- Throughput, ours / nbgrader, whole runs on the same class (start-up included): "
              f"**{nbg_per / (ours['wall'] / ours['n']):.1f}x**. nbgrader's cost is counted over the notebooks it "
              f"graded ({nbg['executed']} of {nbg['n']}).")
    if big and big["n"] > ours["n"]:
        marginal = (big["wall"] - ours["wall"]) / (big["n"] - ours["n"])
        fixed = ours["wall"] - ours["n"] * marginal
        print(f"- Ours, split from the two runs: {fixed:.1f} s start-up (imports, {jobs} sandboxed workers, "
              f"references) + **{marginal * 1000:.0f} ms per submission**.")
        if nbg_per:
            print(f"- Throughput, ours / nbgrader, per submission once started: **{nbg_per / marginal:.0f}x**.")
        print(f"- Beyond its own compute: {marginal * jobs * 1000:.0f} ms of a worker per submission "
              f"({marginal * 1000:.0f} ms x {jobs} jobs) - {big['compute'] * 1000:.0f} ms in-process compute = "
              f"**{(marginal * jobs - big['compute']) * 1000:.0f} ms**; counting start-up, over the {big['n']} "
              f"copies: {(big['wall'] * jobs / big['n'] - big['compute']) * 1000:.0f} ms.")
        print(f"- {big['n']} submissions: **{big['wall']:.0f} s** end to end.")
    else:
        print(f"- Beyond its own compute, start-up included: {ours['wall'] * jobs / ours['n'] * 1000:.0f} ms - "
              f"{mean_compute * 1000:.0f} ms = {(ours['wall'] * jobs / ours['n'] - mean_compute) * 1000:.0f} ms.")
    if nbg:
        ours_totals: dict[str, float] = defaultdict(float)
        ours_status: dict[str, list[str]] = defaultdict(list)
        for row in ours["rows"]:
            student = row["submission"].split("__")[0]
            ours_totals[student] += float(row["score"])
            ours_status[student].append(row["status"])
        print("\n| student | nbgrader total (public checks) | ours total (public and hidden checks) | ours' verdicts |")
        print("|---|---|---|---|")
        for s in students:
            verdicts = ", ".join(f"{v} {ours_status[s].count(v)}" for v in sorted(set(ours_status[s])))
            print(f"| {s} | {nbg['scores'].get(s, float('nan')):g} | {ours_totals.get(s, 0.0):g} | {verdicts} |")
        failed = [line for line in (nbg["log"].read_text()).splitlines() if "error processing assignment '" in line]
        for line in failed:
            print(f"\nnbgrader: {line.strip()} (its notebooks after the unreadable one were not graded)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
