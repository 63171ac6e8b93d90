"""Runs a script as `python script.py` would, in this process, under the locator: `autograder blame`'s first run."""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
import traceback

from ..locator.locator import Locator, report_of
from ..locator.report import Report
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
