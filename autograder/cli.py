"""The command line: `autograder list | grade | check | assign | release | publish | blame | export | report |
workshop`. I/O lives here."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from . import settings as device_choice
from .feedback.language import ENV, LANGUAGES
from .feedback.text import STATUS_NAMES
from .feedback.wording import exercise_text, say
from .intake.files import terminal_text

if TYPE_CHECKING:
    from .core.result import Result
    from .intake.discover import Submission
    from .runner.pool import WarmPool


def _console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def cmd_list(args: argparse.Namespace) -> int:
    from .exercises import EXERCISES

    table = Table(title=say("cli: list title"))
    for column in say("cli: list columns").split("|"):
        table.add_column(column)
    for ex in EXERCISES.values():
        checks = ", ".join(f"{exercise_text(c.name)} ({c.points:g})" for c in ex.checks)
        table.add_row(str(ex.number), ex.id, exercise_text(ex.title), f"{ex.max_score:g}", checks)
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

    return Limits(memory=int(args.memory * 1024**3))


def cmd_grade(args: argparse.Namespace) -> int:
    """Launches the sandboxed workers first, before this process imports torch: the imports of torch (the
    grader's and each worker's) then share the cores instead of queueing."""
    from .intake.out_folder import name_submissions
    from .runner.pool import PoolError, WarmPool

    if args.jobs < 1:
        return _usage(say("cli: jobs"))
    missing = [p for p in args.paths if not p.exists()]
    if missing:
        return _usage(say("cli: no such path", paths=", ".join(map(str, missing))))
    found = name_submissions(args.paths, args.out)  # unique names; a file graded into --out before keeps its own
    if not found:
        return _usage(say("cli: no submissions", paths=", ".join(map(str, args.paths))))
    try:
        pool = WarmPool(min(args.jobs, len(found)), _limits(args), sandbox=False if args.no_sandbox else None,
                        wait=False, run_as=args.run_as)
    except PoolError as e:
        return _error(e)
    with pool:
        return _grade(args, pool, found)


def _grade(args: argparse.Namespace, pool: WarmPool, found: list[Submission]) -> int:
    """`grade`, once its workers are starting: torch, the references, then the batch."""
    import torch

    from .batch import Preparations, Settings, grade_batch, handed_in_for
    from .exercises import EXERCISES
    from .intake.exercise_of import guess
    from .runner.pool import PoolError
    from .settings import DEFAULT_SALT

    if args.exercise and args.exercise not in EXERCISES:
        return _usage(say("intake: unknown asked", asked=repr(args.exercise), known=", ".join(EXERCISES)))
    if args.only_exercise and args.only_exercise not in EXERCISES:
        return _usage(say("intake: unknown asked", asked=repr(args.only_exercise), known=", ".join(EXERCISES)))
    devices = _devices(args.device)
    torch.set_num_threads(1)  # the reference's tensors are tiny; --jobs gives the parallelism
    settings = Settings(devices=devices, exercise=args.exercise, timeout=args.timeout,
                        salt=os.environ.get("AUTOGRADER_SALT", Settings.salt),
                        fixes=not args.no_fixes)
    console = _console()
    preparations = Preparations(settings)
    # while the workers start: the references of the exercises the files' names point to (any other one is
    # made when a submission first needs it; making all twelve would take the cores from the workers)
    named = {guess(s.path, args.exercise, EXERCISES, handed_in_for(s)) for s in found}
    preparations.make_in_background([e for e in EXERCISES if e in named])
    try:
        pool.ready()
    except PoolError as e:
        return _error(e)
    if pool.warning:
        _console(stderr=True).print(Text(say("cli: pool warning", warning=pool.warning), style="bold red"))
    progress = Progress(TextColumn(say("cli: grading")), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.description}"), console=console, disable=args.quiet)
    with progress:
        task = progress.add_task("", total=None if args.only_exercise else len(found))  # unknown: which are

        def done(name: str, result: Result, reused: bool) -> None:
            shown = terminal_text(name).replace("[", "\\[")  # a file's name is text, never markup
            progress.update(task, advance=1, description=f"{shown}{' (already graded)' if reused else ''}")

        results = grade_batch(args.paths, args.out, settings, pool, jobs=args.jobs, on_done=done,
                              preparations=preparations, found=found, regrade=args.regrade,
                              only_exercise=args.only_exercise, gradebook_rows=_overridden(args))
    _summary(console, results, args.out, args.table, public_salt=settings.salt == DEFAULT_SALT)
    return 1 if any(r.status == "grader_error" for r in results) else 0


def _overridden(args: argparse.Namespace) -> Callable[[list[Result], list[Result]], list[Result]]:
    """gradebook.csv's rows with the teacher's overrides (OUT/overrides.csv) applied; with --drop-overrides, those
    of the submissions graded now are dropped first."""
    from .reports.graded import drop_overrides, overridden_results

    def rows(every: list[Result], graded_now: list[Result]) -> list[Result]:
        if args.drop_overrides:
            for line in drop_overrides(args.out, graded_now):
                print(line, file=sys.stderr)
        results, warnings = overridden_results(args.out, every)
        for line in warnings:
            print(f"warning: {line}", file=sys.stderr)
        return results

    return rows


TABLE_ROWS = 20
"""At most this many submissions get a row each after `grade` without --table; more are counted per status."""


def _summary(console: Console, graded: list[Result], out: Path, table_wanted: bool, public_salt: bool = False) -> None:
    """The batch's totals per status and what to run next; the table of every submission where it is short or
    asked for; a warning where the hidden inputs were drawn with the course's public salt, which anyone with the
    repository can reproduce. What a submission named or raised is shown as text, never as markup or terminal
    codes."""
    from .core.status import Status
    from .intake.files import terminal_text

    style = {Status.PASSED: "green", Status.GRADER_ERROR: "bold red", Status.FAILED: "yellow"}
    if table_wanted or len(graded) <= TABLE_ROWS:
        table = Table(title=f"{len(graded)} submissions graded")
        for column in ("submission", "exercise", "status", "score", say("cli: why column")):
            table.add_column(column, overflow="fold")
        for r in graded:
            failed = ", ".join(t.name for t in r.tests if t.status == Status.FAILED)
            why = failed if r.status in (Status.FAILED, Status.PASSED) or not r.causes else r.causes[0].text[:200]
            table.add_row(Text(terminal_text(r.submission)), Text(terminal_text(r.exercise)),
                          Text(str(r.status), style=style.get(r.status, "red")), f"{r.score:g}/{r.max_score:g}",
                          Text(terminal_text(why)))
        console.print(table)
    counts = {s: sum(r.status == s for r in graded) for s in Status}
    line = Text(say("cli: submissions", count=len(graded)))
    for i, (status, n) in enumerate((s, n) for s, n in counts.items() if n):
        line.append(say("cli: list separator") if i else "")
        line.append(say("cli: status count", count=n, status=STATUS_NAMES[status]), style=style.get(status, "red"))
    console.print(line)
    if counts[Status.GRADER_ERROR]:
        console.print(Text(say("cli: grader errors", errors=counts[Status.GRADER_ERROR]), style="bold red"))
    console.print(say("cli: results are in", out=out, gradebook=out / "gradebook.csv")
                  + ("" if table_wanted or len(graded) <= TABLE_ROWS else say("cli: table option")))
    console.print(say("cli: next", out=out))
    if public_salt:
        console.print(Text(say("cli: public salt", env="AUTOGRADER_SALT"), style="yellow"))


def _self_check(exercise: str, code: str, args: argparse.Namespace, pool: WarmPool | None):
    """A self-check of one's own file: in this process, like check() in a notebook (sooner than a sandboxed
    worker, which must import torch again), stopped at --timeout (None then); with --sandbox, in `pool`,
    the grader's sandboxed worker, for a file that is not one's own."""
    from .call import Stop, stopping
    from .pipeline import grade_code
    from .runner import InProcessRunner

    def grade(runner):
        return grade_code(exercise, code, public_only=True, runner=runner, timeout=args.timeout,
                          submission=str(args.path))

    if pool is not None:
        return grade(pool)
    try:
        with stopping(args.timeout):
            return grade(InProcessRunner())
    except Stop as stop:
        if not stop.timed_out:  # Ctrl-C
            raise
        return None


def cmd_check(args: argparse.Namespace) -> int:
    """Reads the file first (nbformat, not torch), to know its exercise; with --sandbox, the worker is then
    launched, warmed for that exercise only, before this process imports torch, as `grade` does: asked
    for by name, with no quiet fallback to a plain process (PoolError says why)."""
    from .catalog import exercise_ids
    from .intake.exercise_of import Malformed, exercise_of
    from .intake.submission import SubmissionError, answer_code

    try:
        answer = answer_code(args.path)
    except (SubmissionError, OSError) as e:
        _console().print(f"[red]{e}[/]")
        return 1
    exercise = exercise_of(answer, args.exercise, exercise_ids())  # as `grade` decides it
    if not args.language and not os.environ.get(ENV):
        _speak_as_the_notebook(args.path)
    if isinstance(exercise, Malformed):
        return _usage(exercise.message)
    from .runner.limits import Limits
    from .runner.pool import PoolError, WarmPool

    try:
        pool = WarmPool(1, Limits(), sandbox=True, wait=False, exercises=(exercise,)) if args.sandbox else None
    except PoolError as e:
        return _error(e)
    with pool or contextlib.nullcontext():
        return _check(args, exercise, answer.code, pool)


def _speak_as_the_notebook(path: Path) -> None:
    """A translated notebook says its language in its metadata (notebook/translated.py): `autograder check` on it
    answers in that language, as its check() does, unless --language or COURSE_LANGUAGE says otherwise."""
    from .feedback.language import known

    if path.suffix != ".ipynb":
        return
    try:
        import nbformat

        said = nbformat.read(path, as_version=4).metadata.get("language")
    except Exception:  # noqa: BLE001 - the file was read once already; its language is a courtesy
        return
    if isinstance(said, str) and known(said):
        os.environ[ENV] = known(said) or "en"


def _check(args: argparse.Namespace, exercise: str, code: str, pool: WarmPool | None) -> int:
    from .core.status import Status
    from .feedback.text import feedback_text, footer
    from .runner.pool import PoolError

    try:
        result = _self_check(exercise, code, args, pool)
    except PoolError as e:
        return _error(e)
    if result is None:
        print(say("cli: stopped", stopped=say("stopped after", seconds=args.timeout)))
        return 1
    print(terminal_text(feedback_text(result)))  # a file that is not one's own (--sandbox) may print anything
    print(footer())
    return 0 if result.status == Status.PASSED else 1


def cmd_assign(args: argparse.Namespace) -> int:
    from .assign import AssignError, assign

    try:
        drifts = assign(args.solutions, args.out, check=args.check, only=tuple(args.exercise or ()))
    except AssignError as e:
        _console(stderr=True).print(f"[red]{e}[/]")
        return 2
    if args.check:
        return _report_drift([f"{d.path}: {d.reason}" for d in drifts], say("cli: assign drift"),
                             say("cli: assign matches", out=args.out, solutions=args.solutions))
    print(say("cli: assigned", out=args.out, solutions=args.solutions)
          + (f" ({', '.join(args.exercise)})" if args.exercise else ""))
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    import torch

    from .exercises import EXERCISES
    from .public import PUBLIC_DIR, drift, write_public
    from .reference_store import ReferencesMissing

    # one thread unless OMP_NUM_THREADS says otherwise (CI checks 1 and 2): the shipped data holds for either,
    # within each dtype's public.DRIFT_TOLERANCE
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS") or 1))
    try:
        if args.check:
            return _report_drift([line for exercise in EXERCISES.values() for line in drift(exercise)],
                                 say("cli: publish drift"),
                                 say("cli: publish matches", folder=PUBLIC_DIR, exercises=len(EXERCISES)))
        for exercise in EXERCISES.values():
            write_public(exercise)
    except ReferencesMissing as e:
        _console(stderr=True).print(f"[red]{e}[/]")
        return 2
    print(say("cli: published", exercises=len(EXERCISES), folder=PUBLIC_DIR))
    return 0


def _report_drift(drifts: list[str], fix: str, matches: str) -> int:
    """`--check`'s report: each drift and what to run to fix them (exit 1), or that nothing drifted (exit 0)."""
    for line in drifts:
        print(f"drift: {line}")
    print(fix if drifts else matches)
    return 1 if drifts else 0


def _usage(message: str) -> int:
    _console(stderr=True).print(Text(say("cli: error", message=message), style="red"))
    return 2


def _error(e: Exception) -> int:
    _console(stderr=True).print(Text(say("cli: error", message=e), style="bold red"))  # never read as markup
    return 1


def _list_arguments(p: argparse.ArgumentParser) -> None:
    p.set_defaults(func=cmd_list)


def _grade_arguments(g: argparse.ArgumentParser) -> None:
    g.add_argument("paths", nargs="+", type=Path, help="submissions: .ipynb and .py files, or folders of them")
    g.add_argument("--exercise", help="exercise id for files whose metadata does not say")
    g.add_argument("--device", default="auto", choices=device_choice.CHOICES,
                   help="auto (default): the CPU, and CUDA where there is one; cpu; cuda; all (as auto, and warns "
                        "where there is no CUDA)")
    g.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions graded at once")
    g.add_argument("--out", type=Path, default=Path("grades"), help="where results go (default: grades/)")
    g.add_argument("--timeout", type=float, default=60.0, help="wall-clock seconds per submission (default 60)")
    g.add_argument("--memory", type=float, default=2.0, help="GiB a submission may allocate (default 2)")
    g.add_argument("--no-sandbox", action="store_true",
                   help="run submissions without bubblewrap (trusted code only: they can read your files)")
    g.add_argument("--run-as", metavar="USER",
                   help="where bubblewrap cannot run (or with --no-sandbox), run submissions as this unprivileged "
                        "user (the grader must be root; that user must be able to read the grader's Python)")
    g.add_argument("--no-fixes", action="store_true",
                   help="for a graded class: feedback keeps its diagnosis (what, where, why) and proposes no "
                        "fix, neither a rewrite of the line nor one in words (default: fixes shown, for self-study)")
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    g.add_argument("--table", action="store_true",
                   help=f"list every submission at the end (by default only when there are at most {TABLE_ROWS})")
    g.add_argument("--regrade", action="store_true",
                   help="grade again files whose results in --out are of the same bytes (by default they are kept)")
    g.add_argument("--only-exercise", metavar="ID",
                   help="grade only the files of this exercise; the others' results in --out stay as they are")
    g.add_argument("--drop-overrides", action="store_true",
                   help="drop the rows of OUT/overrides.csv (scores set by hand) of the submissions graded now "
                        "(by default an override outlives any regrading)")
    g.set_defaults(func=cmd_grade)


def _check_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("path", type=Path, help="your notebook or .py file")
    c.add_argument("--exercise", help="exercise id, where the file's metadata does not say")
    c.add_argument("--timeout", type=float, default=60.0, help="seconds before the check gives up (default 60)")
    c.add_argument("--sandbox", action="store_true",
                   help="run the code in the grader's sandboxed worker (for a file that is not your own)")
    c.set_defaults(func=cmd_check)


def _assign_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 where the exercise notebooks have drifted from the solutions")
    a.add_argument("--solutions", type=Path, default=Path("solutions"), metavar="DIR",
                   help="the solution notebooks, the source of truth (default: solutions/)")
    a.add_argument("--out", type=Path, default=Path("exercises"), metavar="DIR",
                   help="where the students' notebooks are written (default: exercises/)")
    a.add_argument("--exercise", action="append", metavar="ID",
                   help="only this exercise (repeatable; default: every solution notebook)")
    a.set_defaults(func=cmd_assign)


def cmd_release(args: argparse.Namespace) -> int:
    from .release import ReleaseError, release

    try:
        parts = release(args.out, args.repository, fixes=not args.no_fixes)
    except ReleaseError as e:
        return _usage(str(e))
    print(say("cli: released", out=args.out, parts=", ".join(p.name for p in parts), repository=args.repository))
    return 0


def _release_arguments(r: argparse.ArgumentParser) -> None:
    r.add_argument("out", type=Path, help="a new (or empty) folder for the student edition")
    r.add_argument("--repository", required=True, metavar="URL",
                   help="where you will publish it (your own copy): the notebooks' setup cell, pyproject.toml and "
                        "the book's launch buttons install from and link to it")
    r.add_argument("--no-fixes", action="store_true",
                   help="for a graded class: the edition's check() and `autograder check` keep their diagnosis "
                        "(what, where, why) and propose no fix (default: fixes shown, for self-study)")
    r.set_defaults(func=cmd_release)


def _publish_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--check", action="store_true", help="exit non-zero where the shipped public data has drifted")
    p.set_defaults(func=cmd_publish)


def _blame_arguments(p: argparse.ArgumentParser) -> None:
    from .blame.fix import script

    p.description = script.__doc__.split("\n\n")[0]
    script.configure(p)


def _export_arguments(p: argparse.ArgumentParser) -> None:
    from .platforms import export

    export.configure(p)


def _report_arguments(p: argparse.ArgumentParser) -> None:
    from .reports import cli

    cli.configure(p)


def _workshop_arguments(p: argparse.ArgumentParser) -> None:
    from .workshop import cli

    p.description = cli.__doc__.split("\n\n")[0]
    cli.configure(p)


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "list": ("the exercises and their points", _list_arguments),
    "grade": ("grade files or folders of submissions", _grade_arguments),
    "check": ("self-check a notebook or .py file (public checks only)", _check_arguments),
    "assign": ("write exercises/ from solutions/", _assign_arguments),
    "release": ("the student edition: exercises, book and package, without solutions or references",
                _release_arguments),
    "publish": ("write the self-check's public inputs and expected outcomes from references/", _publish_arguments),
    "blame": ("run a script and name the line that modified a tensor saved for backward", _blame_arguments),
    "export": ("a bundle for a grading platform (autograder/platforms/: Gradescope, PrairieLearn)", _export_arguments),
    "report": ("HTML feedback per student and submission, a class overview, gradebooks for a spreadsheet and for "
               "Canvas or Moodle", _report_arguments),
    "workshop": ("a live view of a workshop room (serve)", _workshop_arguments),
}
"""Each subcommand: its line in `autograder --help`, and what adds its arguments (and its `func`)."""


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line, with the arguments of `command` only (of every subcommand where it is None). The
    modules behind blame, export and report import torch, and `grade` launches its workers before this
    process imports torch: a command imports only what it needs. `autograder --help` needs none of them."""
    p = argparse.ArgumentParser(prog="autograder", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    for name, (summary, add_arguments) in COMMANDS.items():
        s = sub.add_parser(name, help=summary)
        s.add_argument("--language", choices=sorted(LANGUAGES),
                       help=f"the language of what the course says (default: ${ENV}, else en); "
                            "PyTorch's own messages stay in English")
        if command is None or command == name:
            add_arguments(s)
    return p


def main(argv: list[str] | None = None) -> int:
    """Runs one command. The command is the first argument (the top level has no options but --help)."""
    argv = sys.argv[1:] if argv is None else argv
    args = parser(argv[0] if argv else "").parse_args(argv)
    if getattr(args, "language", None):  # for this process and every one it starts: words are made when said
        os.environ[ENV] = args.language
    return args.func(args)


def run() -> None:
    """The console script (and `python -m autograder`): main(), then a quick exit. Tearing torch's modules
    down takes about a second (benchmarks/cli_exit.py) and nothing is left to do once the results are
    written. `blame` exits the ordinary way: the script it ran may have exit handlers of its own."""
    argv = sys.argv[1:]
    code = main(argv)
    if argv[:1] == ["blame"]:
        sys.exit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
