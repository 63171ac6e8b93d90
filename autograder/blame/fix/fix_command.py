"""`autograder blame --fix [--dry-run] SCRIPT.py [ARGS...]`: the command, from the lock to the exit status.

In order: the script's path is resolved and its bytes read (sources.py); its lock is taken (transaction.py:
a second --fix on the same file stops here); it must be writable; the script runs once, as `python` would,
under the locator; the plan is said (what will run, how many times, why: `--dry-run` stops there); the
search runs the rewrites in scratch folders (fix.py); the verified rewrite is written, with its backup,
or nothing is. A signal that ends the process (SIGTERM, SIGHUP, SIGINT, SIGQUIT) stops it all, with the
runs and their scratch folders, and leaves no file half written.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from ...feedback.wording import say
from ..locator.report import NO_REPORT
from ..suggest.suggest import suggest
from .execute import run_script
from .fix import COULD_NOT_WRITE, FIXED, SCRIPT_FAILED, Repair, Search, plan
from .runs import Program, cool_down, warm_up
from .sources import Sources
from .transaction import CouldNotWrite, FileLock, Interrupted, check_writable, commit, stop_on_signals


def run_fix(args: argparse.Namespace) -> int:
    """--fix (and --dry-run): parsed arguments in, exit status out."""
    out = sys.stderr if args.json else sys.stdout
    repair: Repair | None = None
    try:
        with stop_on_signals():
            sources = Sources(args.script, os.getcwd())  # resolved, and read, before the script runs
            script = sources.file(args.script)
            if script is None:
                raise CouldNotWrite(say("blame: cannot read script", script=args.script))
            with FileLock(sources.script, args.script):
                if not args.dry_run:
                    check_writable([script])
                    warm_up()  # the runs' interpreter imports torch while the script runs here
                print(say("blame: running once", script=args.script), file=out, flush=True)
                status, reports = run_script(args.script, list(args.args), quiet_stdout=args.json)
                if not reports:
                    return _nothing(args, status)
                data = reports[0].to_json()
                if not args.json:
                    print(reports[0].text() + "\n")
                steps = plan(data, sources)
                if args.dry_run:
                    return _dry_run(args, data, steps, status, sources)
                print("\n".join(steps), file=out, flush=True)
                program = Program(str(sources.script), tuple(args.args), sources.folder,
                                  {str(sources.script): script.text})
                repair = Search(program, sources, args.timeout,
                                lambda line: print(line, file=out, flush=True)).run(data)
                if repair.kept:
                    _write(repair, sources)
    except CouldNotWrite as e:
        return _refused(args, str(e))
    except Interrupted as e:
        backups = repair.backups if repair is not None else {}
        print(say("blame: stopped by signal", signal=e, what=say(
            "blame: stopped, fix written", backups=", ".join(map(str, backups.values())))
            if backups else say("blame: stopped, nothing changed")), file=sys.stderr)
        return 128 + e.signum
    finally:
        cool_down()
    if args.json:
        print(json.dumps(data | {"fix": repair.to_json()}, indent=2))
    else:
        print(repair.text())
    return repair.status


def _write(repair: Repair, sources: Sources) -> None:
    """All the files the kept rewrites change, each under its own lock (the script's is held already)."""
    changes = [(sources.file(str(path)), text) for path, text in repair.texts.items()]
    try:
        with contextlib.ExitStack() as locks:
            for f, _ in changes:
                if f is not None and f.path != sources.script:
                    locks.enter_context(FileLock(f.path, f.shown))
            repair.backups = commit([(f, text) for f, text in changes if f is not None])
    except CouldNotWrite as e:
        repair.refused = str(e)


def _nothing(args: argparse.Namespace, status: int) -> int:
    said = say("blame: ran without it") if status == 0 else say("blame: failed otherwise", status=status)
    if args.json:
        print(json.dumps(NO_REPORT | {"fix": None}))
    else:
        print(say("blame: nothing to fix", said=said))
    return FIXED if status == 0 else SCRIPT_FAILED


def _dry_run(args: argparse.Namespace, data: dict, steps: list[str], status: int, sources: Sources) -> int:
    shown = suggest(data, read=sources.text)
    if args.json:
        print(json.dumps(data | {"fix": shown.to_json() if shown else None, "plan": steps}, indent=2))
    else:
        print("\n".join(steps))
        if shown is not None:
            print("\n" + shown.text(status=say("blame: not verified, dry run")))
    return status


def _refused(args: argparse.Namespace, why: str) -> int:
    if args.json:
        print(json.dumps(NO_REPORT | {"fix": None, "refused": why}))
    print(say("blame: not fixed", why=why), file=sys.stderr)
    return COULD_NOT_WRITE
