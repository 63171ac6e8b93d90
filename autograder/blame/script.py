"""`autograder blame [--json] [--fix [--dry-run]] SCRIPT.py [ARGS...]`: run a script under the locator, report the
in-place culprit and suggest a rewrite of it; with --fix, write the rewrite once re-running has verified it.

Also `python -m autograder.blame.script ...`. Options go before the script; what follows it is the script's
own `sys.argv[1:]`. Exit status: the script's own, or 1 when the in-place error escaped it (the report is
printed instead of the traceback); with --fix (fix.py): 0 fixed (or nothing to fix), 1 the script failed
otherwise, 3 no rewrite verified (words only), 4 a verified rewrite could not be written; 128 + N when
signal N stopped it (no file is left half written).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import runpy
import sys
import traceback
from pathlib import Path

from .locator import Locator, report_of
from .report import NO_REPORT, Report
from .runs import RUN_TIMEOUT
from .transaction import Interrupted


def run_script(path: str, argv: list[str], *, quiet_stdout: bool = False) -> tuple[int, list[Report]]:
    """Runs `path` as `__main__` with `sys.argv = [path, *argv]`, as `python path argv...` would.

    Returns its exit status and the reports. The script's stdout goes to stderr when `quiet_stdout`
    (so that --json prints one object on stdout).
    """
    saved_argv, saved_path, folder = sys.argv[:], sys.path[:], os.getcwd()
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    locator = Locator(outermost=_run_main.__code__)  # the frames that called the runner are not the script's
    status = 0
    redirect = contextlib.redirect_stdout(sys.stderr) if quiet_stdout else contextlib.nullcontext()
    try:
        with redirect, locator:
            _run_main(path)
    except SystemExit as e:
        status = _exit_status(e.code)
    except Interrupted:
        raise  # a signal that ends `blame` itself
    except BaseException as e:  # noqa: BLE001 - the script's error is its result, as under `python`
        report = report_of(e)
        if report is None:
            traceback.print_exc()
        elif report not in locator.reports:  # raised by a locate() of the script's own
            locator.reports.insert(0, report)
        status = 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        with contextlib.suppress(OSError):
            os.chdir(folder)  # a script that changed folder does not move what blame reads or writes next
    return status, locator.reports


def _run_main(path: str) -> None:
    runpy.run_path(path, run_name="__main__")


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run(args: argparse.Namespace) -> int:
    """The `blame` subcommand: parsed arguments in, exit status out."""
    script = Path(args.script)
    if not script.is_file():
        print(f"error: no such script: {args.script}", file=sys.stderr)
        return 2
    if args.fix or args.dry_run:
        from .fix_command import run_fix  # torch and libcst: loaded for --fix only

        return run_fix(args)
    from .suggest import suggest  # libcst: loaded by `blame` only, not by every `autograder` command

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
            print(f"({len(reports) - 1} more in-place error(s) were raised and caught by the script)")
    return status


def configure(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--json", action="store_true", help="print one JSON object (book/reference/blame.md) instead of text")
    p.add_argument("--fix", action="store_true",
                   help="write the suggested rewrite once re-running has verified it (the original kept as SCRIPT.orig)")
    p.add_argument("--dry-run", action="store_true",
                   help="with --fix: run the script once, then say which rewrites --fix would try and how many runs "
                        "that takes; run nothing more, write nothing")
    p.add_argument("--timeout", type=float, default=RUN_TIMEOUT, help="seconds for each run of --fix")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    p.set_defaults(func=run)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = configure(argparse.ArgumentParser(prog="python -m autograder.blame.script", description=__doc__))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
