"""The workshop's log: one SQLite file in a private temporary folder, deleted when the server stops.

It holds what participants sent and nothing else (no address, no host name): the raw reports, and per
(participant, exercise) the progress the dashboard reads, so that a dashboard poll reads a few hundred rows
however long the workshop has run. A participant's status on an exercise is "passed" once any check run
passed (trying things afterwards does not undo it), else "failing" after a failed run, else "not started".
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..result import Status
from .schema import Report

SCHEMA = """
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE participants (pid INTEGER PRIMARY KEY, pseudonym TEXT UNIQUE NOT NULL, seat TEXT NOT NULL,
                           joined REAL NOT NULL, last_seen REAL NOT NULL);
CREATE TABLE reports (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, exercise TEXT NOT NULL, t REAL NOT NULL,
                      status TEXT NOT NULL, failing TEXT NOT NULL, error TEXT, op TEXT, line_id TEXT);
CREATE TABLE progress (pid INTEGER NOT NULL, exercise TEXT NOT NULL, status TEXT NOT NULL,
                       failures INTEGER NOT NULL, first_t REAL NOT NULL, first_failure REAL, last_t REAL NOT NULL,
                       passed_t REAL, failing TEXT NOT NULL, error TEXT, op TEXT, PRIMARY KEY (pid, exercise));
CREATE TABLE lines (id TEXT PRIMARY KEY, exercise TEXT NOT NULL, op TEXT, line TEXT NOT NULL, reports INTEGER NOT NULL);
"""


@dataclass(frozen=True)
class Thresholds:
    """A participant is stuck on an exercise not yet passed after `attempts` failed runs or `minutes`."""

    attempts: int = 3
    minutes: float = 5.0


class Store:
    def __init__(self, folder: Path | None = None):
        self.folder = Path(tempfile.mkdtemp(prefix="autograder-workshop-", dir=folder))  # mode 0700
        self.path = self.folder / "workshop.sqlite"
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.executescript(SCHEMA)

    # --- writing -------------------------------------------------------------------------------------
    def participant(self, pseudonym: str) -> int | None:
        row = self.db.execute("SELECT pid FROM participants WHERE pseudonym = ?", (pseudonym,)).fetchone()
        return row[0] if row else None

    def participants(self) -> int:
        return self.db.execute("SELECT count(*) FROM participants").fetchone()[0]

    def record(self, report: Report, now: float) -> None:
        """Adds one validated report: the log row, the participant, their progress, the culprit line."""
        failing = json.dumps([name for name, passed in report.checks if not passed])
        failed = report.status == Status.FAILED
        line_id = None
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute(
                "INSERT INTO participants (pseudonym, seat, joined, last_seen) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (pseudonym) DO UPDATE SET seat = excluded.seat, last_seen = excluded.last_seen",
                (report.pseudonym, report.seat, now, now))
            pid = self.participant(report.pseudonym)
            if report.line:
                line_id = hashlib.sha256(f"{report.exercise}\0{report.op}\0{report.line}".encode()).hexdigest()[:16]
                self.db.execute(
                    "INSERT INTO lines (id, exercise, op, line, reports) VALUES (?, ?, ?, ?, 1) "
                    "ON CONFLICT (id) DO UPDATE SET reports = reports + 1",
                    (line_id, report.exercise, report.op, report.line))
            self.db.execute(
                "INSERT INTO reports (pid, exercise, t, status, failing, error, op, line_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (pid, report.exercise, now, report.status, failing, report.error, report.op, line_id))
            self.db.execute(
                "INSERT INTO progress (pid, exercise, status, failures, first_t, first_failure, last_t, passed_t, "
                "failing, error, op) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?5, ?7, ?8, ?9, ?10) "
                "ON CONFLICT (pid, exercise) DO UPDATE SET status = excluded.status, "
                "failures = failures + excluded.failures, last_t = excluded.last_t, "
                "first_failure = coalesce(first_failure, excluded.first_failure), "
                "passed_t = coalesce(passed_t, excluded.passed_t), failing = excluded.failing, "
                "error = excluded.error, op = excluded.op",
                (pid, report.exercise, report.status, int(failed), now, now if failed else None,
                 now if report.status == Status.PASSED else None, failing, report.error, report.op))

    # --- reading -------------------------------------------------------------------------------------
    def progress(self) -> list[sqlite3.Row]:
        """One row per (participant, exercise) tried, with the participant's seat and pseudonym."""
        self.db.row_factory = sqlite3.Row
        try:
            return self.db.execute(
                "SELECT p.pseudonym, p.seat, g.* FROM progress g JOIN participants p USING (pid) "
                "ORDER BY p.pid, g.exercise").fetchall()
        finally:
            self.db.row_factory = None

    def seats(self) -> list[tuple[str, str]]:
        return self.db.execute("SELECT pseudonym, seat FROM participants ORDER BY pid").fetchall()

    def lines(self, limit: int = 50) -> list[tuple[str, str, str | None, str, int]]:
        """Distinct culprit lines shared with the second opt-in (id, exercise, op, line, reports), most frequent first."""
        return self.db.execute(
            "SELECT id, exercise, op, line, reports FROM lines ORDER BY reports DESC, id LIMIT ?", (limit,)).fetchall()

    def line(self, line_id: str) -> tuple[str, str | None, str] | None:
        return self.db.execute("SELECT exercise, op, line FROM lines WHERE id = ?", (line_id,)).fetchone()

    def report_counts(self) -> list[tuple[str, int, int]]:
        """All runs per exercise: (exercise, runs, failed runs)."""
        return self.db.execute(
            "SELECT exercise, count(*), sum(status = 'failed') FROM reports GROUP BY exercise").fetchall()

    def failing_check_counts(self) -> dict[tuple[str, str], int]:
        """How many failed runs failed each (exercise, check), over the whole workshop."""
        counts: dict[tuple[str, str], int] = {}
        for exercise, failing in self.db.execute("SELECT exercise, failing FROM reports WHERE failing != '[]'"):
            for name in json.loads(failing):
                counts[exercise, name] = counts.get((exercise, name), 0) + 1
        return counts

    def op_counts(self) -> list[tuple[str, str, int]]:
        return self.db.execute(
            "SELECT exercise, op, count(*) FROM reports WHERE op IS NOT NULL GROUP BY exercise, op "
            "ORDER BY count(*) DESC").fetchall()

    # --- the end -------------------------------------------------------------------------------------
    def close(self, delete: bool = True) -> None:
        self.db.close()
        if delete:
            shutil.rmtree(self.folder, ignore_errors=True)
