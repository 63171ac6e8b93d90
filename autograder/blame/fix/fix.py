"""`autograder blame --fix`: find a rewrite that re-running verifies, culprit after culprit, then write it.

For each candidate rewrite of the culprit, best first (suggest.py), the rewritten program runs in a fresh
interpreter, from text, in a scratch folder (runs.py): the user's files are only read. It is compared with
its reference (verify.py). When it is verified, that is the fix. When it removes its error but the program
then meets another in-place error elsewhere (a second culprit), and it computes what the program computed
as far as it ran, the search goes on from there with the rewrites so far kept: each rewrite is checked,
and the last one makes the whole program run and is compared with the reference of all of them. Nothing is
written until the whole chain is verified, and then all of it or none (transaction.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...feedback.wording import say
from ..suggest.cst_edit import unified_diff
from ..suggest.suggest import Suggestion, suggestions
from .runs import RUN_TIMEOUT, Program
from .sources import Sources
from .verify import Verification, compare, partial_compare, reference, verify

FIXED, SCRIPT_FAILED, WORDS_ONLY, COULD_NOT_WRITE = 0, 1, 3, 4
"""Exit statuses of --fix: the file now runs without the error (or had none to fix); the script failed
otherwise (another error, or a non-zero exit); no rewrite was verified (the suggestion is in words); a
verified rewrite could not be written (the file changed, is read-only, is locked by another --fix). 2 stays a
usage error, 128 + N a signal."""

MAX_CULPRITS = 4
"""Culprits fixed one after another in one run of --fix."""

MAX_TRIES = 12
"""Rewritten programs run in all: each is one more run of the user's script."""

REFERENCES = {"out_of_place": say("blame: reference out_of_place"), "same": say("blame: reference same"),
              "truncated": say("blame: reference truncated")}
"""What each rewrite's contract is compared with (verify.py, gradients.py)."""


@dataclass(frozen=True)
class Cost:
    """What a verified rewrite costs: the lines it changes, and the values `clone()` copies in one forward (before
    the first backward pass) of its verification run (None: not measured)."""

    suggestion: Suggestion
    lines: int
    copied: int | None

    def text(self) -> str:
        s = self.suggestion
        copied = say("blame: cost unmeasured") if self.copied is None else str(self.copied)
        return say("blame: cost", kind=s.kind, file=s.file, line=s.line, lines=self.lines, copied=copied)


def _lines(s: Suggestion) -> int:
    return max(len((s.before or "").splitlines()), len((s.after or "").splitlines()))


@dataclass
class Repair:
    """What --fix found: the rewrites that together are verified (culprit after culprit), every rewrite tried
    and not kept, the words when none is; after writing, the backups or why nothing could be written."""

    kept: list[Suggestion] = field(default_factory=list)
    verification: Verification | None = None
    tried: list[tuple[Suggestion, Verification]] = field(default_factory=list)
    words: Suggestion | None = None
    texts: dict[Path, str] = field(default_factory=dict)
    """The new text of each file the kept rewrites change."""
    backups: dict[Path, Path] = field(default_factory=dict)
    refused: str | None = None
    """Why the verified rewrite was not written (transaction.CouldNotWrite)."""
    originals: dict[Path, str] = field(default_factory=dict)
    shown: dict[Path, str] = field(default_factory=dict)
    costs: list[Cost] = field(default_factory=list)  # each verified rewrite of the first culprit: kept, the least

    @property
    def status(self) -> int:
        if self.kept and self.refused is not None:
            return COULD_NOT_WRITE
        return FIXED if self.kept and self.backups else WORDS_ONLY

    def backup_names(self) -> dict[Path, str]:
        """Each backup as the user names its file: `train.py.orig` beside `train.py`."""
        return {p: os.path.join(os.path.dirname(self.shown[p]), b.name) for p, b in self.backups.items()}

    def diff(self) -> str:
        """Every change the kept rewrites make, file by file, as one unified diff."""
        return "".join(unified_diff(self.originals[p], text, self.shown[p]) for p, text in self.texts.items())

    def to_json(self) -> dict[str, Any] | None:
        shown = self.kept[0] if self.kept else (self.tried[0][0] if self.tried else self.words)
        if shown is None:
            return None
        data = shown.to_json(verified=bool(self.kept) and self.refused is None)
        if self.kept:
            data["diff"] = self.diff()
            data["steps"] = [s.to_json(verified=True) for s in self.kept]
        data["verification"] = (self.verification or (self.tried[0][1] if self.tried else None) or _unverified()).detail
        data["backup"] = ", ".join(self.backup_names().values()) or None
        data["tried"] = [{"kind": s.kind, "file": s.file, "line": s.line, "not_kept": v.detail} for s, v in self.tried]
        data["costs"] = [{"kind": c.suggestion.kind, "file": c.suggestion.file, "line": c.suggestion.line,
                          "lines": c.lines, "values_copied_per_forward": c.copied} for c in self.costs]
        if self.refused is not None:
            data["refused"] = self.refused
        if not self.kept and self.words is not None:
            withdrawn = self.withdrawn()
            data["words"] = say("blame: advice withdrawn", kinds=withdrawn) if withdrawn else self.words.why
            data["words_verified"] = False
        return data

    def text(self) -> str:
        lines = [say("blame: tried, not kept", kind=s.kind, file=s.file, line=s.line, detail=v.detail)
                 for s, v in self.tried]
        if self.kept and self.verification is not None:
            status = say("blame: verified, not written") if self.refused else say("blame: applied and verified")
            lines.append(say("blame: fix diff", status=status, diff=self.diff().rstrip()))
            lines += [say("blame: fix why", file=s.file, line=s.line, why=s.why) for s in self.kept]
            lines.append(say("blame: verified", detail=self.verification.detail))
            if len(self.costs) > 1:
                lines.append(say("blame: costs", costs="\n".join("  " + c.text() for c in self.costs)))
            if self.refused is not None:
                lines.append(say("blame: not written", why=self.refused))
            else:
                lines += [say("blame: fixed", file=self.shown[p], backup=b) for p, b in self.backup_names().items()]
        else:
            lines.append(say("blame: no rewrite verified"))
            withdrawn = self.withdrawn()
            if withdrawn:
                lines.append(say("blame: advice withdrawn", kinds=withdrawn))
            elif self.words is not None:
                lines.append(self.words.text())
        return "\n".join(lines)

    def withdrawn(self) -> str | None:
        """The kinds of rewrite the words advise when --fix tried every one of them and none worked (then the
        words are not shown: advice the tool's own attempts showed does not work is never printed); else None."""
        if self.kept or self.words is None or not self.words.advises:
            return None
        failed = {s.kind for s, _ in self.tried}
        return ", ".join(self.words.advises) if set(self.words.advises) <= failed else None


class Search:
    """The rewrites worth trying for a report, verified by running them; references made once each."""

    def __init__(self, program: Program, sources: Sources, timeout: float = RUN_TIMEOUT,
                 progress: Callable[[str], None] = lambda line: None) -> None:
        self.program, self.sources, self.timeout, self.progress = program, sources, timeout, progress
        self.references: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
        self.runs = 0
        self.repair = Repair()

    def run(self, report: dict[str, Any]) -> Repair:
        found = self._solve(report, [], (), {}, 0)
        if found is not None:
            self.repair.kept, self.repair.verification, texts = found
            self.repair.texts = {p: t for p, t in texts.items()}
            for p in texts:
                original = self.sources.file(str(p))
                assert original is not None, p  # _solve rewrote only files it could read
                self.repair.originals[p] = original.text
                self.repair.shown[p] = self.sources.shown(p)
        return self.repair

    def _solve(self, report: dict[str, Any], chain: list[Suggestion], sites: tuple[str, ...], texts: dict[Path, str],
               depth: int) -> tuple[list[Suggestion], Verification, dict[Path, str]] | None:
        """Depth first: each candidate of this culprit, and where it moves the error on, the next culprit's."""
        found = suggestions(report, read=lambda name: self._read(name, texts))
        if found is None:
            return None
        candidates, words = found
        if depth == 0:
            self.repair.words = words
        verified: list[tuple[Cost, tuple[list[Suggestion], Verification, dict[Path, str]]]] = []
        for s in candidates:
            path = self.sources.resolve(s.file) if s.rewrite is not None and s.file else None
            if path is None or self.sources.file(s.file or "") is None or self.runs >= MAX_TRIES:
                continue
            now = [*chain, s]
            mode = "truncated" if any(c.contract == "truncated" for c in now) else "reference"
            now_sites = (*sites, _site(report, self.sources)) if s.contract == "out_of_place" else sites
            refused = self._claim(mode, now_sites)
            if refused is not None:
                self.repair.tried.append((s, refused))
                continue
            ref = self._reference(mode, now_sites)
            assert s.rewrite is not None  # path is None for a suggestion without a rewrite
            new_texts = {**texts, path: s.rewrite.text}
            self.progress(say("blame: trying", kind=s.kind, file=s.file, line=s.line))
            self.runs += 1
            verification, recording = verify(self.program.rewritten({str(p): t for p, t in new_texts.items()}), ref,
                                             self.timeout)
            if verification.verified and depth > 0:
                return now, verification, new_texts
            if verification.verified:
                cost = Cost(s, _lines(s), recording.get("copied"))
                self.repair.costs.append(cost)
                verified.append((cost, (now, verification, new_texts)))
                if not cost.copied:
                    break  # nothing copied: no verified candidate can cost less per forward
                continue  # a copy: a later candidate (out of place, one line) may be verified and copy less
            moved = self._moved_on(report, recording, ref)
            if moved is not None and depth + 1 < MAX_CULPRITS:
                self.progress(say("blame: another culprit follows", file=moved["culprit"]["file"],
                                  line=moved["culprit"]["line"]))
                deeper = self._solve(moved, now, now_sites, new_texts, depth + 1)
                if deeper is not None:
                    return deeper
            self.repair.tried.append((s, verification))
        if verified:  # the smallest repair: fewest values copied per forward, then fewest lines changed
            return min(verified, key=lambda v: (v[0].copied or 0, v[0].lines))[1]
        return None

    def _read(self, name: str, texts: dict[Path, str]) -> str | None:
        path = self.sources.resolve(name)
        return texts[path] if path in texts else self.sources.text(name)

    def _reference(self, mode: str, sites: tuple[str, ...]) -> dict[str, Any]:
        key = (mode, sites)
        if key not in self.references:
            what = REFERENCES["truncated" if mode == "truncated" else "out_of_place" if sites else "same"]
            self.progress(say("blame: running the reference", what=what))
            self.runs += 1
            self.references[key] = reference(self.program, mode, self.timeout, sites)
        return self.references[key]

    def _claim(self, mode: str, sites: tuple[str, ...]) -> Verification | None:
        """With culprits made out of place, the program must still compute what it computed: else why not."""
        if not sites:
            return None
        same = compare(self._reference(mode, ()), self._reference(mode, sites))
        if same.verified or not same.error_gone:
            return None  # equal, or the reference itself fails (then every try says so)
        return Verification(True, False, say("blame: the write is part of the program", detail=same.detail))

    def _moved_on(self, report: dict[str, Any], recording: dict[str, Any], ref: dict[str, Any]) -> dict | None:
        """The next culprit's report when the rewrite removed its error and another in-place error followed,
        having computed what the reference computed so far; else None."""
        error = recording.get("error") or {}
        nxt = error.get("report") if error.get("inplace") else None
        if not isinstance(nxt, dict) or not isinstance(nxt.get("culprit"), dict) or nxt["culprit"].get("line") is None:
            return None
        nxt = _shown_names(nxt, self.sources)
        if _where(nxt) == _where(report) or partial_compare(ref, recording) is not None:
            return None
        return nxt


def _site(report: dict[str, Any], sources: Sources) -> str:
    """FILE:LINE:OP of the culprit a rewrite makes out of place, as the reference run matches it."""
    c = report["culprit"]
    path = sources.resolve(str(c.get("file"))) or c.get("file")
    return f"{path}:{c.get('line')}:{c.get('op')}"


def _where(report: dict[str, Any]) -> tuple:
    c, saved = report.get("culprit") or {}, report.get("saved_by") or {}
    return c.get("file"), c.get("line"), saved.get("file"), saved.get("line")


def _shown_names(report: dict[str, Any], sources: Sources) -> dict[str, Any]:
    """A report from a verification run names the script by its absolute path: use the name the user typed."""
    def rename(site: Any) -> Any:
        if isinstance(site, dict) and site.get("file") == str(sources.script):
            site = {**site, "file": sources.given}
        if isinstance(site, dict) and isinstance(site.get("chain"), list):
            site = {**site, "chain": [rename(s) for s in site["chain"]]}
        return site

    out = dict(report)
    for key in ("culprit", "saved_by"):
        out[key] = rename(report.get(key))
    if isinstance(report.get("modifications"), list):
        out["modifications"] = [rename(m) for m in report["modifications"]]
    return out


def plan(report: dict[str, Any], sources: Sources) -> list[str]:
    """What --fix will run, and why, before it runs anything more (`--dry-run` prints it and stops)."""
    found = suggestions(report, read=sources.text)
    candidates = [s for s in (found[0] if found else []) if s.rewrite is not None]
    lines = []
    keys = set()
    for s in candidates:
        keys.add(s.contract)
        lines.append(say("blame: plan try", kind=s.kind, file=s.file, line=s.line, reference=REFERENCES[s.contract]))
    if not candidates:
        return [say("blame: plan nothing applies")]
    references = len(keys) + ("out_of_place" in keys and "same" not in keys)
    head = (say("blame: plan runs", script=sources.given),
            say("blame: plan references", count=references, s="s" if references > 1 else ""),
            say("blame: plan one run each", count=len(candidates)),
            say("blame: plan next culprit", culprits=MAX_CULPRITS, tries=MAX_TRIES),
            say("blame: plan rewrites"))
    return [*head, *lines, say("blame: plan nothing written")]


def _unverified() -> Verification:
    return Verification(False, False, say("blame: no rewrite applies"))
