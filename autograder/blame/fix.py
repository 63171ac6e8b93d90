"""`autograder blame --fix`: write the suggested rewrite, run the program again, keep it only if verified.

For each candidate rewrite, best first (suggest.py): the file is copied beside itself (`train.py.orig`), the
rewrite is written, and the program runs again in a fresh interpreter (verify.py). The first rewrite that
removes the error *and* keeps the reference's gradients stays, with its backup; any other is undone at once
(the file is restored byte for byte and its backup removed). When none is verified, nothing is left changed
and the exit status is `NOT_FIXED`, with the suggestion in words.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .suggest import Suggestion, suggestions
from .verify import RUN_TIMEOUT, Verdict, reference, verify

FIXED, NOT_FIXED = 0, 3
"""Exit statuses of --fix (1 stays the script's in-place error, 2 a usage error)."""

REFERENCES = {"out_of_place": "the culprit call made out of place, every saved tensor kept as saved",
              "same": "every saved tensor kept as saved, the write kept",
              "truncated": "every saved tensor kept as saved, each backward stopped at the previous step's graph"}
"""What each rewrite's contract is compared with (verify.py, gradients.py)."""


@dataclass
class Outcome:
    """What --fix did: the rewrite kept (or None), its verdict, the backup, and every rewrite tried."""

    kept: Suggestion | None = None
    verdict: Verdict | None = None
    backup: Path | None = None
    tried: list[tuple[Suggestion, Verdict]] = field(default_factory=list)
    words: Suggestion | None = None

    @property
    def status(self) -> int:
        return FIXED if self.kept is not None else NOT_FIXED

    def to_json(self) -> dict[str, Any] | None:
        shown = self.kept or (self.tried[0][0] if self.tried else self.words)
        if shown is None:
            return None
        data = shown.to_json(verified=self.kept is not None)
        data["verification"] = (self.verdict or (self.tried[0][1] if self.tried else None) or _unverified()).detail
        data["backup"] = str(self.backup) if self.backup else None
        if self.kept is None and self.words is not None:
            data["words"] = self.words.why
        return data

    def text(self) -> str:
        lines = []
        for s, v in self.tried:
            lines.append(f"Tried ({s.kind}) {s.file}:{s.line}: not kept: {v.detail}")
        if self.kept is not None and self.verdict is not None:
            lines.append(self.kept.text(status="applied and verified"))
            lines.append(f"Verified: the in-place error is gone, and {self.verdict.detail}.")
            lines.append(f"Fixed {self.kept.file}; the original is in {self.backup}.")
        else:
            lines.append("Not fixed: no rewrite could be verified, so no file was changed.")
            if self.words is not None:
                lines.append(self.words.text())
        return "\n".join(lines)


def read_file(file: str) -> str | None:
    """A file's text exactly as on disk (newlines kept), or None."""
    path = Path(file)
    try:
        return path.read_bytes().decode("utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        return None


def backup_path(path: Path) -> Path:
    """`train.py.orig`, or `train.py.orig.1`, ... when an earlier backup is there."""
    candidate, n = path.with_name(path.name + ".orig"), 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.orig.{n}")
    return candidate


def fix(script: str, args: list[str], report: dict[str, Any], timeout: float = RUN_TIMEOUT,
        progress: Callable[[str], None] = lambda line: None) -> Outcome:
    """Tries each candidate rewrite of the report's culprit; keeps the first that is verified."""
    found = suggestions(report, read=read_file)
    if found is None:
        return Outcome()
    candidates, words = found
    outcome = Outcome(words=words)
    references: dict[tuple[str, str | None], dict[str, Any]] = {}
    for s in candidates:
        if s.rewrite is None or s.file is None:
            continue
        key = _reference_of(s.contract, report)
        if key not in references:
            progress(f"running the reference ({REFERENCES[s.contract]})...")
            references[key] = reference(script, args, key[0], timeout, key[1])
        progress(f"trying ({s.kind}) {s.file}:{s.line} ...")
        verdict, backup = _try(script, args, s, references[key], timeout)
        if verdict.verified:
            outcome.kept, outcome.verdict, outcome.backup = s, verdict, backup
            return outcome
        outcome.tried.append((s, verdict))
    return outcome


def _try(script: str, args: list[str], s: Suggestion, ref: dict[str, Any], timeout: float) -> tuple[Verdict, Path]:
    """Writes the rewrite (after a backup), verifies it, and undoes it unless verified."""
    assert s.rewrite is not None and s.file is not None
    path = Path(s.file)
    backup = backup_path(path)
    shutil.copy2(path, backup)
    verdict = Verdict(False, False, "not run")
    try:
        path.write_bytes(s.rewrite.text.encode("utf-8"))
        verdict, _ = verify(script, args, ref, timeout)
    finally:
        if not verdict.verified:
            shutil.copy2(backup, path)  # the original bytes and times
            backup.unlink()
    return verdict, backup


def _reference_of(contract: str, report: dict[str, Any]) -> tuple[str, str | None]:
    """(gradients.py mode, the culprit to make out of place or None) for a rewrite's contract."""
    if contract == "truncated":
        return "truncated", None
    c = report["culprit"]
    return "reference", f"{c['file']}:{c['line']}:{c['op']}" if contract == "out_of_place" else None


def _unverified() -> Verdict:
    return Verdict(False, False, "no rewrite applies")
