"""`autograder blame [--json] [--fix [--dry-run]] SCRIPT.py [ARGS...]`: run a script under the locator, report the
in-place culprit and suggest a rewrite of it; with --fix, write the rewrite once re-running has verified it.

Also `python -m autograder.blame.fix.script ...`. Options go before the script; what follows it is the script's
own `sys.argv[1:]`. Exit status: the script's own, or 1 when the in-place error escaped it (the report is
printed instead of the traceback); with --fix (fix.py): 0 fixed (or nothing to fix), 1 the script failed
otherwise, 3 no rewrite verified (words only), 4 a verified rewrite could not be written; 128 + N when
signal N stopped it (no file is left half written).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ...feedback.wording import say
from ..locator.report import NO_REPORT
from ..suggest.suggest import suggest
from .execute import run_script
from .fix_command import run_fix
from .runs import RUN_TIMEOUT


def run(args: argparse.Namespace) -> int:
    """The `blame` subcommand: parsed arguments in, exit status out."""
    script = Path(args.script)
    if not script.is_file():
        print(say("blame: no such script", script=args.script), file=sys.stderr)
        return 2
    if args.fix or args.dry_run:
        return run_fix(args)
    status, reports = run_script(args.script, list(args.args), quiet_stdout=args.json)
    data = reports[0].to_json() if reports else None
    suggestion = suggest(data) if data else None
    if args.json:
        fixed = {"fix": suggestion.to_json() if suggestion else None}
        print(json.dumps((data or NO_REPORT) | fixed, indent=2))
    else:
        for report in reports[:1]:
            print(report.text())
            if suggestion is not None:
                print("\n" + suggestion.text())
        if len(reports) > 1:
            print(say("blame: more errors caught", count=len(reports) - 1))
    return status


def configure(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (book/reference/blame.md) instead of text")
    p.add_argument("--fix", action="store_true",
                   help="write the suggested rewrite once re-running has verified it "
                        "(the original kept as SCRIPT.orig)")
    p.add_argument("--dry-run", action="store_true",
                   help="with --fix: run the script once, then say which rewrites --fix would try and how many runs "
                        "that takes; run nothing more, write nothing")
    p.add_argument("--timeout", type=float, default=RUN_TIMEOUT, help="seconds for each run of --fix")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    p.set_defaults(func=run)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = configure(argparse.ArgumentParser(prog="python -m autograder.blame.fix.script", description=__doc__))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
