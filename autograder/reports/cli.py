"""`autograder report GRADED`: the class report (HTML pages, gradebooks for a spreadsheet and an LMS) from a
folder `autograder grade` filled."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..feedback.wording import say


def cmd_report(args: argparse.Namespace) -> int:
    from .graded import ReportError
    from .html import write_report

    out = args.out or args.graded / "report"
    try:
        paths = write_report(args.graded, out, roster=args.roster, for_students=args.for_students)
    except ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    lines = [say("reports: wrote overview", path=paths["index"]),
             say("reports: wrote pages", students=paths["students"], submissions=paths["submissions"]),
             say("reports: wrote spreadsheet gradebook", path=paths["gradebook"])]
    if paths["lms"]:
        lines.append(say("reports: wrote lms gradebook", path=paths["lms"]))
    if paths["for_students"]:
        lines.append(say("reports: wrote student folders", path=paths["for_students"]))
    print("\n".join(lines))
    for warning in paths["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def configure(r: argparse.ArgumentParser) -> None:
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
