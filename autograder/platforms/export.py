"""`autograder export NAME`: the bundle for a grading platform, one subcommand per platform of the registry
(autograder/platforms/), each with the common options below and the platform's own."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..bundle.config import DEFAULT_MEMORY_MB, GRADER_MB, BundleConfig
from ..bundle.platform import Platform
from ..bundle.source import ExportError
from ..catalog import exercise_ids
from ..feedback.language import LANGUAGES, chosen
from ..feedback.wording import say
from ..settings import DEFAULT_SALT
from . import platforms

SALT_ENV = "AUTOGRADER_SALT"


def _config(platform: Platform, args: argparse.Namespace) -> BundleConfig:
    salt = os.environ.get(SALT_ENV, "")
    if not salt and not args.public_salt:
        raise ExportError(say("platforms: salt not set", env=SALT_ENV,
                              risk=say("platforms: public salt risk", env=SALT_ENV)))
    exercises = tuple(args.exercise) if args.exercise else exercise_ids()
    return BundleConfig(exercises=exercises, timeout=args.timeout, salt=salt or DEFAULT_SALT,
                        memory_mb=args.memory_mb, options=platform.options(args), fixes=not args.no_fixes,
                        language=chosen(args.language))


def memory_advice(platform: Platform, config: BundleConfig) -> str:
    """Whether the platform's memory limit holds the grader and a submission's share, and what to change if not."""
    need = GRADER_MB + config.memory_mb
    limit = platform.memory
    fits = need <= limit.mb
    line = say("platforms: memory", grader_mb=GRADER_MB, memory_mb=config.memory_mb, need=need, platform=platform.name,
               limit=limit.mb, verdict=say("platforms: memory enough") if fits else say("platforms: memory not enough"))
    most = limit.mb - GRADER_MB
    if limit.raise_where is None:
        return (say("platforms: memory fixed fits", line=line, most=most) if fits else
                say("platforms: memory fixed too small", line=line, most=most))
    if fits:
        return say("platforms: memory fits", line=line, most=most, where=limit.raise_where, grader_mb=GRADER_MB)
    return say("platforms: memory too small", line=line, where=limit.raise_where, need=need)


def cmd_export(args: argparse.Namespace) -> int:
    platform = platforms()[args.platform]
    try:
        config = _config(platform, args)
        lines = platform.export(args.out, config, args)
    except ExportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if config.salt == DEFAULT_SALT:
        print(say("platforms: public salt warning", risk=say("platforms: public salt risk", env=SALT_ENV)),
              file=sys.stderr)
    print("\n".join([*lines, memory_advice(platform, config)]))
    return 0


def configure(export: argparse.ArgumentParser) -> None:
    """`export`'s arguments: one subcommand per platform."""
    subcommands = export.add_subparsers(dest="platform", required=True, metavar="PLATFORM")
    for name, platform in platforms().items():
        p = subcommands.add_parser(name, help=platform.summary, description=platform.summary)
        p.add_argument("--out", type=Path, required=True, help="folder to write into")
        p.add_argument("--exercise", action="append", choices=list(exercise_ids()),
                       help="an exercise to include (repeatable; default: all); the bundle carries only their "
                            "references")
        p.add_argument("--timeout", type=float, default=60.0, help="seconds per submission (default 60)")
        p.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB, metavar="MB",
                       help="memory a submission may allocate beyond the grader's worker "
                            f"(default: {DEFAULT_MEMORY_MB}; "
                            "the command says whether the platform's memory limit holds it)")
        p.add_argument("--public-salt", action="store_true",
                       help=f"allow a bundle without {SALT_ENV} (its hidden inputs are then the course's public ones: "
                            "for trying a platform out, never for a graded class)")
        p.add_argument("--no-fixes", action="store_true",
                       help="for a graded class: feedback keeps its diagnosis (what, where, why) and proposes no "
                            "fix, neither a rewrite of the line nor one in words (default: fixes shown, for "
                            "self-study)")
        p.add_argument("--language", choices=sorted(LANGUAGES), default=argparse.SUPPRESS,
                       help="the language of the bundle's feedback (default: $COURSE_LANGUAGE, else en)")
        platform.add_options(p)
        p.set_defaults(func=cmd_export)
