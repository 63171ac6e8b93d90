"""`autograder export gradescope|prairielearn` and `autograder report`. Wire into autograder/cli.py with:

    from .export.cli import add_subcommands
    add_subcommands(sub)          # in parser(), after the other sub-commands
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..batch import Settings
from ..exercises import EXERCISES
from .container import GRADESCOPE_VISIBILITIES, BundleConfig
from .source import ExportError


def _config(args: argparse.Namespace) -> BundleConfig:
    exercises = tuple(args.exercise) if args.exercise else tuple(EXERCISES)
    return BundleConfig(exercises=exercises, timeout=args.timeout,
                        salt=os.environ.get("AUTOGRADER_SALT", Settings.salt),
                        hidden_visibility=getattr(args, "hidden_visibility", "after_due_date"))


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def cmd_export_gradescope(args: argparse.Namespace) -> int:
    from .gradescope import export

    try:
        path = export(args.out, _config(args))
    except ExportError as e:
        return _fail(str(e))
    print(f"wrote {path}: upload it as the assignment's autograder (Ubuntu 24.04 base image; book/reference/platforms.md)")
    return 0


def cmd_export_prairielearn(args: argparse.Namespace) -> int:
    from .prairielearn import export

    try:
        folders = export(args.out, _config(args), image=args.image)
    except ExportError as e:
        return _fail(str(e))
    print(f"wrote {len(folders)} question(s) under {args.out / 'questions'}, the grader under "
          f"{args.out / 'serverFilesCourse'} and its image's Dockerfile under {args.out / 'graders'}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .html import write_report

    out = args.out or args.graded / "report"
    try:
        paths = write_report(args.graded, out)
    except ExportError as e:
        return _fail(str(e))
    print(f"class overview: {paths['index']}\nreports per submission: {paths['submissions']}/\n"
          f"LMS gradebook: {paths['gradebook']}")
    return 0


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Adds `export` (with `gradescope` and `prairielearn`) and `report` to the `autograder` parser."""
    from .prairielearn import DEFAULT_IMAGE

    export = sub.add_parser("export", help="bundles for grading platforms (Gradescope, PrairieLearn)")
    platforms = export.add_subparsers(dest="platform", required=True)
    for name, func, what in (("gradescope", cmd_export_gradescope, "autograder.zip for a Gradescope assignment"),
                             ("prairielearn", cmd_export_prairielearn, "one PrairieLearn question per exercise")):
        p = platforms.add_parser(name, help=what)
        p.add_argument("--out", type=Path, required=True, help="folder to write into")
        p.add_argument("--exercise", action="append", choices=list(EXERCISES),
                       help="an exercise to include (repeatable; default: all)")
        p.add_argument("--timeout", type=float, default=60.0, help="seconds per submission")
        p.set_defaults(func=func)
        if name == "gradescope":
            p.add_argument("--hidden-visibility", choices=GRADESCOPE_VISIBILITIES, default="after_due_date",
                           help="Gradescope visibility of the checks on hidden inputs (default: after_due_date)")
        else:
            p.add_argument("--image", default=DEFAULT_IMAGE,
                           help=f"the grading image PrairieLearn pulls (default: {DEFAULT_IMAGE})")

    r = sub.add_parser("report", help="HTML feedback per submission, a class overview and an LMS gradebook")
    r.add_argument("graded", type=Path, help="the --out folder of `autograder grade`")
    r.add_argument("--out", type=Path, help="where the report goes (default: GRADED/report)")
    r.set_defaults(func=cmd_report)


def main(argv: list[str] | None = None) -> int:
    """The same commands on their own (`python -m autograder.export.cli ...`), until the main CLI has them."""
    parser = argparse.ArgumentParser(prog="autograder")
    add_subcommands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
