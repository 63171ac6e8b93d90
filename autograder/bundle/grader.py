"""A platform's grader, in its container: the one skeleton every platform runs (`python -m
autograder.platforms.NAME`).

In order: the grader's own files are made root's alone and the results folder root's to write; results.json
is reserved, holding the platform's "the grader did not finish" result; the bundle's configuration is read;
the worker is launched before torch is imported here (container.started_runner); the student's folder is
graded (student_folder.py, with the batch grader's grade_file); the platform's results.json is written. The
platform decides only the layout, the configuration's place, and the results' format (bundle/platform.py).
It exits 0 whatever happened: both platforms read results only then.
"""

from __future__ import annotations

import argparse
import os
import time
import traceback
from pathlib import Path

from ..feedback import language
from ..feedback.wording import say
from . import container
from .config import CONFIG_NAME, BundleConfig
from .platform import Platform

NOT_FINISHED = say("platforms: grader not finished")


def run(platform: Platform, root: Path, args: argparse.Namespace) -> int:
    """Grades ROOT's submission folder as the bundle says; always leaves ROOT's results.json."""
    start = time.perf_counter()
    layout = platform.layout
    results = root / layout.results / "results.json"
    why = say("platforms: grader not private")
    try:  # no student code runs unless the grader's files are out of its reach
        config_path = platform.config_path(root, args)
        container.lock_down(private=[*(root / p for p in layout.private), config_path.parent],
                            shared=[root / layout.results])
        fallback = platform.broken(NOT_FINISHED, 0.0)
        container.reserve_results(results, fallback)
        why = say("platforms: grader configuration unreadable", name=CONFIG_NAME)
        config = platform.graded(BundleConfig.load(config_path), args)
        os.environ[language.ENV] = config.language  # the feedback's language, as the bundle was exported
    except Exception as e:  # noqa: BLE001 - a broken bundle: every submission says so, staff fix and regrade
        traceback.print_exc()
        fallback = data = platform.broken(f"{why}: {type(e).__name__}", time.perf_counter() - start)
    else:
        submission = root / layout.submission
        with container.started_runner(config, container.make_runner) as runner:  # before torch is imported here
            from .student_folder import grade_submission, match_files, report_grader_errors, unmatched_note

            matched = match_files(submission, config)
            graded = grade_submission(submission, config, runner, matched)
        report_grader_errors(graded)
        data = platform.results(graded, config, time.perf_counter() - start,
                                unmatched_note(submission, matched, config))
    container.write_results(results, data, fallback)
    print(platform.message(data))
    return 0


def main(platform: Platform, argv: list[str] | None = None) -> int:
    """The container's command line: --root (default: the platform's; AUTOGRADER_ROOT replaces it) and the
    platform's own arguments."""
    parser = argparse.ArgumentParser(prog=f"python -m autograder.platforms.{platform.name}",
                                     description=f"Grades one submission in {platform.name}'s container.")
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("AUTOGRADER_ROOT", platform.layout.root)))
    platform.add_container_options(parser)
    args = parser.parse_args(argv)
    return run(platform, args.root, args)
