"""The command line: `autograder list | grade | check | assign | publish | blame | export | report`. I/O lives here."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import devices as device_choice

ROOT = Path(__file__).resolve().parent.parent


def _console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def cmd_list(args: argparse.Namespace) -> int:
    from .exercises import EXERCISES

    table = Table(title="Exercises")
    for column in ("#", "id", "title", "points", "checks"):
        table.add_column(column)
    for ex in EXERCISES.values():
        checks = ", ".join(f"{c.name} ({c.points:g})" for c in ex.checks)
        table.add_row(str(ex.number), ex.id, ex.title, f"{ex.max_score:g}", checks)
    _console().print(table)
    return 0


def _devices(choice: str) -> tuple[str, ...]:
    import torch

    found, warning = device_choice.resolve(choice, torch.cuda.is_available())
    if warning:
        _console(stderr=True).print(f"[yellow]warning:[/] {warning}")
    return found


def _limits(args: argparse.Namespace):
    from .runner.limits import Limits

    return Limits(timeout=args.timeout, memory=int(args.memory * 1024**3))


class _NoExit(argparse.ArgumentParser):
    def error(self, message: str):  # a quiet look at the arguments: main() reports what is wrong
        raise ValueError(message)


def start_workers_early(argv: list[str]):
    """For `grade`: launches the sandboxed workers before this process imports torch, so that the three
    imports of torch (the grader's and two workers') share the cores instead of queueing. Returns the
    launched WarmPool, or None (another command, bad arguments: cmd_grade then does it all itself)."""
    if argv[:1] != ["grade"] or "-h" in argv or "--help" in argv:
        return None
    quiet = _NoExit(add_help=False)
    _grade_arguments(quiet)
    try:
        args = quiet.parse_args(argv[1:])
    except ValueError:
        return None
    from .discover import named_submissions
    from .runner.pool import PoolError, WarmPool

    if args.jobs < 1 or any(not path.exists() for path in args.paths):
        return None
    files, _ = named_submissions(args.paths, exclude=[args.out])
    if not files:
        return None
    try:
        return WarmPool(min(args.jobs, len(files)), _limits(args), sandbox=False if args.no_sandbox else None,
                        wait=False, run_as=args.run_as)
    except PoolError:
        return None


def cmd_grade(args: argparse.Namespace) -> int:
    from .batch import References, Settings, grade_batch, named_submissions
    from .exercises import EXERCISES
    from .runner.pool import PoolError, WarmPool

    if args.exercise and args.exercise not in EXERCISES:
        return _usage(f"unknown exercise {args.exercise!r}; known: {', '.join(EXERCISES)}")
    missing = [p for p in args.paths if not p.exists()]
    if missing:
        return _usage(f"no such file or folder: {', '.join(map(str, missing))}")
    devices = _devices(args.device)
    import torch

    torch.set_num_threads(1)  # the reference's tensors are tiny; --jobs gives the parallelism
    files, _ = named_submissions(args.paths, exclude=[args.out])  # unique names: clashing files all graded
    if not files:
        return _usage("no .ipynb or .py submissions found under " + ", ".join(map(str, args.paths)))
    settings = Settings(devices=devices, exercise=args.exercise, timeout=args.timeout,
                        salt=os.environ.get("AUTOGRADER_SALT", Settings.salt))
    console = _console()
    references = References(settings)
    references.prepare([args.exercise] if args.exercise else EXERCISES)  # while the workers start
    try:
        pool = getattr(args, "workers", None) or WarmPool(
            min(args.jobs, len(files)), _limits(args), sandbox=False if args.no_sandbox else None, wait=False,
            run_as=args.run_as)
        pool.ready()
    except PoolError as e:
        _console(stderr=True).print(f"[bold red]error:[/] {e}")
        return 1
    if pool.warning:
        _console(stderr=True).print(f"[bold red]WARNING: {pool.warning}[/]")
    progress = Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.description}"), console=console, disable=args.quiet)
    with pool, progress:
        task = progress.add_task("", total=len(files))

        def done(name: str, data: dict, reused: bool) -> None:
            progress.update(task, advance=1, description=f"{name}{' (already graded)' if reused else ''}")

        results = grade_batch(args.paths, args.out, settings, pool, jobs=args.jobs, on_done=done,
                              references=references)
    _summary(console, results, args.out)
    return 1 if any(r.get("status") == "grader_error" for r in results) else 0


def _summary(console: Console, results: list[dict], out: Path) -> None:
    table = Table(title=f"{len(results)} submissions graded")
    for column in ("submission", "exercise", "status", "score", "failed checks"):
        table.add_column(column, overflow="fold")
    style = {"passed": "green", "grader_error": "bold red", "failed": "yellow"}
    for r in results:
        failed = ", ".join(t["name"] for t in r.get("tests", []) if t["status"] == "failed")
        status = r.get("status", "")
        table.add_row(r.get("submission", ""), r.get("exercise", ""), f"[{style.get(status, 'red')}]{status}[/]",
                      f"{r.get('score', 0):g}/{r.get('max_score', 0):g}", failed)
    console.print(table)
    errors = sum(r.get("status") == "grader_error" for r in results)
    if errors:
        console.print(f"[bold red]{errors} submission(s) hit an internal grading error: see their results.json[/]")
    console.print(f"Results: {out}/<submission>/results.json; gradebook: {out / 'gradebook.csv'}")


class _OutOfTime(KeyboardInterrupt):
    """Raised by the alarm of a self-check that runs past --timeout. Like Ctrl-C, it stops the check
    (answer code that catches Exception cannot swallow it, and the harness lets it through)."""


def _self_check(exercise: str, code: str, args: argparse.Namespace):
    """A self-check of one's own file: in this process, like check() in a notebook (about 3 s sooner than
    a sandboxed worker, which must import torch again), with an alarm for --timeout; with --sandbox, in
    the grader's sandboxed worker, for a file that is not one's own."""
    import signal

    from .pipeline import grade_code
    from .runner import InProcessRunner
    from .runner.limits import Limits
    from .runner.pool import WarmPool

    def grade(runner):
        return grade_code(exercise, code, public_only=True, runner=runner, timeout=args.timeout,
                          submission=str(args.path))

    if args.sandbox:  # asked for by name: no quiet fallback to a plain process (PoolError says why)
        with WarmPool(1, Limits(timeout=args.timeout), sandbox=True) as pool:
            return grade(pool)

    def out_of_time(signum, frame):
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, out_of_time)
    signal.setitimer(signal.ITIMER_REAL, args.timeout)
    try:
        return grade(InProcessRunner())
    except _OutOfTime:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def cmd_check(args: argparse.Namespace) -> int:
    from .report import feedback_text
    from .submission import SubmissionError, answer_code

    try:
        answer = answer_code(args.path)
    except (SubmissionError, OSError) as e:
        _console().print(f"[red]{e}[/]")
        return 1
    from .exercises import EXERCISES

    exercise = answer.exercise or args.exercise
    if exercise is None:
        return _usage(f"{args.path} does not say which exercise it is: pass --exercise ID")
    if exercise not in EXERCISES:
        return _usage(f"unknown exercise {exercise!r}; known: {', '.join(EXERCISES)}")
    from .runner.pool import PoolError

    try:
        result = _self_check(exercise, answer.code, args)
    except PoolError as e:
        _console(stderr=True).print(f"[bold red]error:[/] {e}")
        return 1
    if result is None:
        print(f"Stopped after {args.timeout:g} s: does your code loop forever? (--timeout sets the limit)")
        return 1
    print(feedback_text(result))
    print("(Self-check: public checks only. The grader also checks gradients on hidden inputs.)")
    return 0 if result.status == "passed" else 1


def cmd_assign(args: argparse.Namespace) -> int:
    from .assign import AssignError, assign

    try:
        drifts = assign(args.solutions, args.exercises, check=args.check)
    except AssignError as e:
        _console(stderr=True).print(f"[red]{e}[/]")
        return 2
    if args.check:
        for d in drifts:
            print(f"drift: {d.path}: {d.reason}")
        if drifts:
            print("Run `autograder assign` to regenerate exercises/ from solutions/.")
            return 1
        print(f"exercises/ matches solutions/ ({len(list(args.solutions.glob('*.ipynb')))} notebooks)")
        return 0
    print(f"wrote {args.exercises}/ from {args.solutions}/")
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    import torch

    from .exercises import EXERCISES
    from .public import PUBLIC_DIR, drift, write_public
    from .reference_store import ReferencesMissing

    torch.set_num_threads(1)  # as the tests run: the same bits whatever the machine's core count
    try:
        if args.check:
            drifts = [line for exercise in EXERCISES.values() for line in drift(exercise)]
            for line in drifts:
                print(f"drift: {line}")
            if drifts:
                print("Run `autograder publish` to remake the public data from references/.")
                return 1
            print(f"{PUBLIC_DIR} matches references/ ({len(EXERCISES)} exercises)")
            return 0
        for exercise in EXERCISES.values():
            write_public(exercise)
    except ReferencesMissing as e:
        _console(stderr=True).print(f"[red]{e}[/]")
        return 2
    print(f"wrote the public data of {len(EXERCISES)} exercises to {PUBLIC_DIR}")
    return 0


def _usage(message: str) -> int:
    _console(stderr=True).print(f"[red]error:[/] {message}")
    return 2


def _grade_arguments(g: argparse.ArgumentParser) -> None:
    g.add_argument("paths", nargs="+", type=Path)
    g.add_argument("--exercise", help="exercise id for files whose metadata does not say")
    g.add_argument("--device", default="auto", choices=device_choice.CHOICES)
    g.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions graded at once")
    g.add_argument("--out", type=Path, default=Path("grades"), help="where results go (default: grades/)")
    g.add_argument("--timeout", type=float, default=60.0, help="wall-clock seconds per submission (default 60)")
    g.add_argument("--memory", type=float, default=2.0, help="GiB a submission may allocate (default 2)")
    g.add_argument("--no-sandbox", action="store_true",
                   help="run submissions without bubblewrap (trusted code only: they can read your files)")
    g.add_argument("--run-as", metavar="USER",
                   help="where bubblewrap cannot run (or with --no-sandbox), run submissions as this unprivileged "
                        "user (the grader must be root; that user must be able to read the grader's Python)")
    g.add_argument("--quiet", action="store_true", help="no progress bar")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autograder", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the exercises and their points").set_defaults(func=cmd_list)

    g = sub.add_parser("grade", help="grade files or folders of submissions")
    _grade_arguments(g)
    g.set_defaults(func=cmd_grade)


    c = sub.add_parser("check", help="self-check a notebook or .py file (public checks only)")
    c.add_argument("path", type=Path)
    c.add_argument("--exercise")
    c.add_argument("--timeout", type=float, default=60.0, help="seconds before the check gives up (default 60)")
    c.add_argument("--sandbox", action="store_true",
                   help="run the code in the grader's sandboxed worker (for a file that is not your own)")
    c.set_defaults(func=cmd_check)

    a = sub.add_parser("assign", help="write exercises/ from solutions/")
    a.add_argument("--check", action="store_true", help="exit non-zero where exercises/ has drifted")
    a.add_argument("--solutions", type=Path, default=Path("solutions"))
    a.add_argument("--exercises", type=Path, default=Path("exercises"))
    a.set_defaults(func=cmd_assign)

    pub = sub.add_parser("publish", help="write the self-check's public inputs and expected outcomes from references/")
    pub.add_argument("--check", action="store_true", help="exit non-zero where the shipped public data has drifted")
    pub.set_defaults(func=cmd_publish)

    from .blame.script import add_subcommand as add_blame
    from .export.cli import add_subcommands as add_exports
    from .workshop.cli import add_subcommand as add_workshop

    add_blame(sub)
    add_exports(sub)
    add_workshop(sub)
    return p


def main(argv: list[str] | None = None, workers=None) -> int:
    """Runs one command. `workers`: a pool that start_workers_early() launched for this `grade`."""
    try:
        args = parser().parse_args(argv)
        args.workers = workers
        if getattr(args, "jobs", 1) < 1:
            return _usage("--jobs must be at least 1")
        return args.func(args)
    finally:
        if workers is not None:
            workers.close()


def run() -> None:
    """The console script (and `python -m autograder`): main(), then a quick exit. Tearing torch's modules
    down takes about a second (benchmarks/cli_exit.py) and nothing is left to do once the results are
    written. `blame` exits the ordinary way: the script it ran may have exit handlers of its own."""
    argv = sys.argv[1:]
    code = main(argv, workers=start_workers_early(argv))
    if argv[:1] == ["blame"]:
        sys.exit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
