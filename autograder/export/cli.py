"""The arguments and the work of `autograder export gradescope|prairielearn` and `autograder report`
(autograder/cli.py registers them)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..exercises import EXERCISES
from ..settings import Settings
from .container import (
    DEFAULT_MEMORY_MB,
    GRADER_MB,
    GRADESCOPE_DEFAULT_MB,
    GRADESCOPE_VISIBILITIES,
    STUDENT_USER,
    BundleConfig,
)
from .source import ExportError


def _config(args: argparse.Namespace) -> BundleConfig:
    exercises = tuple(args.exercise) if args.exercise else tuple(EXERCISES)
    return BundleConfig(exercises=exercises, timeout=args.timeout,
                        salt=os.environ.get("AUTOGRADER_SALT", Settings.salt),
                        hidden_visibility=getattr(args, "hidden_visibility", "after_due_date"),
                        memory_mb=args.memory_mb)


def _memory(config: BundleConfig, limit: str, limit_mb: int) -> tuple[str, bool]:
    """The line on the platform's memory limit for this bundle, and whether the limit holds it."""
    need = GRADER_MB + config.memory_mb
    return (f"memory: the grader and its worker take about {GRADER_MB} MB and a submission up to {config.memory_mb} MB "
            f"more (--memory-mb), {need} MB in all; {limit} is {limit_mb} MB: "
            + ("enough" if need <= limit_mb else "NOT enough"), need <= limit_mb)


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def cmd_export_gradescope(args: argparse.Namespace) -> int:
    from .gradescope import export

    try:
        config = _config(args)
        path = export(args.out, config)
    except ExportError as e:
        return _fail(str(e))
    from .gradescope import BASE_IMAGE

    print(f"wrote {path}: upload it as the assignment's autograder, built on {BASE_IMAGE} "
          f"(book/reference/platforms.md).\n"
          f"sandbox: setup.sh installs bubblewrap; where it cannot run in the container, submissions run as the "
          f"unprivileged user {STUDENT_USER}, which setup.sh creates.\n"
          + _gradescope_memory(config))
    return 0


def _gradescope_memory(config: BundleConfig) -> str:
    line, fits = _memory(config, "Gradescope's default limit", GRADESCOPE_DEFAULT_MB)
    where = "the assignment's memory limit (Settings > Autograder Settings)"
    if fits:
        return (f"{line}. If you raise --memory-mb past {GRADESCOPE_DEFAULT_MB - GRADER_MB}, raise {where} "
                f"to {GRADER_MB} MB plus --memory-mb.")
    return f"{line}: raise {where} to at least {GRADER_MB + config.memory_mb} MB, or grading is killed."


def cmd_export_prairielearn(args: argparse.Namespace) -> int:
    from .prairielearn import export

    try:
        config = _config(args)
        folders = export(args.out, config, image=args.image)
    except ExportError as e:
        return _fail(str(e))
    from .prairielearn import BUILD, GRADER_FOLDER, JOB_MEMORY_MB

    print(f"wrote {len(folders)} question(s) under {args.out / 'questions'}, the grader under "
          f"{args.out / 'serverFilesCourse'} and its image's Dockerfile under {args.out / 'graders'}.\n"
          f"image: build it for PrairieLearn's x86-64 graders and push it: "
          f"{BUILD.format(image=args.image, folder=args.out / 'graders' / GRADER_FOLDER)} && docker push {args.image}\n"
          f"sandbox: the image has bubblewrap; where it cannot run, submissions run as the unprivileged user "
          f"{STUDENT_USER}, which the image creates.\n"
          + _prairielearn_memory(config, JOB_MEMORY_MB))
    return 0


def _prairielearn_memory(config: BundleConfig, limit_mb: int) -> str:
    line, fits = _memory(config, "PrairieLearn's limit per grading job", limit_mb)
    most = limit_mb - GRADER_MB
    if fits:
        return f"{line}, for --memory-mb up to {most} (a course cannot raise PrairieLearn's limit)."
    return f"{line}, and a course cannot raise it: export again with --memory-mb {most} or less."


def cmd_report(args: argparse.Namespace) -> int:
    from .html import write_report

    out = args.out or args.graded / "report"
    try:
        paths = write_report(args.graded, out, roster=args.roster, for_students=args.for_students)
    except ExportError as e:
        return _fail(str(e))
    lines = [f"class overview: {paths['index']} (students sorted by name, score and status beside it)",
             f"a page per student: {paths['students']}/; per submission: {paths['submissions']}/",
             f"gradebook for a spreadsheet: {paths['gradebook']}"]
    if paths["lms"]:
        lines.append(f"gradebook to import into the LMS: {paths['lms']}")
    if paths["for_students"]:
        lines.append(f"to hand out, a folder per student with only their own page: {paths['for_students']}/")
    print("\n".join(lines))
    for warning in paths["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def configure_export(export: argparse.ArgumentParser) -> None:
    """`export`'s arguments: one subcommand per platform."""
    from .prairielearn import DEFAULT_IMAGE

    platforms = export.add_subparsers(dest="platform", required=True)
    for name, func, what in (("gradescope", cmd_export_gradescope, "autograder.zip for a Gradescope assignment"),
                             ("prairielearn", cmd_export_prairielearn, "one PrairieLearn question per exercise")):
        p = platforms.add_parser(name, help=what)
        p.add_argument("--out", type=Path, required=True, help="folder to write into")
        p.add_argument("--exercise", action="append", choices=list(EXERCISES),
                       help="an exercise to include (repeatable; default: all)")
        p.add_argument("--timeout", type=float, default=60.0, help="seconds per submission")
        p.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB, metavar="MB",
                       help=f"memory a submission may allocate beyond the grader's worker (default: {DEFAULT_MEMORY_MB}; "
                            "the command says whether the platform's memory limit holds it)")
        p.set_defaults(func=func)
        if name == "gradescope":
            p.add_argument("--hidden-visibility", choices=GRADESCOPE_VISIBILITIES, default="after_due_date",
                           help="Gradescope visibility of the checks on hidden inputs (default: after_due_date)")
        else:
            p.add_argument("--image", default=DEFAULT_IMAGE,
                           help=f"the grading image PrairieLearn pulls (default: {DEFAULT_IMAGE})")


def configure_report(r: argparse.ArgumentParser) -> None:
    """`report`'s arguments."""
    r.add_argument("graded", type=Path, help="the --out folder of `autograder grade`")
    r.add_argument("--out", type=Path, help="where the report goes (default: GRADED/report)")
    r.add_argument("--roster", type=Path, metavar="FILE",
                   help="the LMS's own gradebook export (Canvas: Grades > Export; Moodle: Grade administration > "
                        "Export > Plain text file): joins submissions to its students, lists those with no "
                        "submission, and writes gradebook_canvas.csv or gradebook_moodle.csv in its import format")
    r.add_argument("--for-students", type=Path, metavar="DIR",
                   help="also write DIR/<student>/index.html, one folder per student holding only their own "
                        "feedback (no class overview, nothing about classmates, nothing teacher-only)")
    r.set_defaults(func=cmd_report)
