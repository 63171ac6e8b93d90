"""The room's state: one SQLite file (`serve --state`, mode 0600 in a 0700 folder) that outlives a restart.

It holds the room's code and tokens (so that a restarted server is the same room: participants' attempts
and the host's open tab go on working), the participants (a pseudonym the server drew, a hash of the secret
it gave them at join, the seat label they chose, when they were last seen, their sticky note), what they
sent, and per (participant, exercise) the progress the dashboard reads, so that a dashboard poll reads a
few hundred rows however long the workshop has run. No address, no host name. `autograder workshop end`
exports and deletes it.

A participant's status on an exercise is "passed" once any check passed (trying things afterwards does
not undo it), else "failing" after a run that did not pass (the untouched starter's too), else "not started". Reports
carry an id drawn by the client: one sent again counts once.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..core.status import Status
from ..feedback.wording import say
from .names import pseudonym as draw_pseudonym
from .schema import Attempt

SCHEMA = """
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS participants (pid INTEGER PRIMARY KEY, pseudonym TEXT UNIQUE NOT NULL, secret TEXT,
    seat TEXT NOT NULL, joined REAL NOT NULL, last_seen REAL NOT NULL, flag TEXT, flag_t REAL);
CREATE TABLE IF NOT EXISTS reports (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, exercise TEXT NOT NULL,
    t REAL NOT NULL, status TEXT NOT NULL, failing TEXT NOT NULL, error TEXT, op TEXT, misconception TEXT,
    line_id TEXT, rid TEXT);
CREATE TABLE IF NOT EXISTS progress (pid INTEGER NOT NULL, exercise TEXT NOT NULL, status TEXT NOT NULL,
    failures INTEGER NOT NULL, first_t REAL NOT NULL, first_failure REAL, last_t REAL NOT NULL, passed_t REAL,
    failing TEXT NOT NULL, error TEXT, op TEXT, misconception TEXT, feedback TEXT, PRIMARY KEY (pid, exercise));
CREATE TABLE IF NOT EXISTS lines (id TEXT PRIMARY KEY, exercise TEXT NOT NULL, op TEXT, line TEXT NOT NULL,
    reports INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS hints (id INTEGER PRIMARY KEY, t REAL NOT NULL, exercise TEXT, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS joins (pid INTEGER NOT NULL, t REAL NOT NULL);
CREATE TABLE IF NOT EXISTS delivered (pid INTEGER NOT NULL, hint INTEGER NOT NULL, PRIMARY KEY (pid, hint));
"""
INDEXES = "CREATE UNIQUE INDEX IF NOT EXISTS reports_rid ON reports (pid, rid) WHERE rid IS NOT NULL;"
# A run that did not pass, the untouched starter's included: someone who runs it again and again is stuck.
FAILED = (Status.FAILED, Status.TIMED_OUT, Status.CRASHED, Status.NOT_ATTEMPTED)
PEOPLE = "SELECT pid, pseudonym, seat, last_seen, flag, flag_t FROM participants"
PROGRESS = ("SELECT pid, exercise, status, failures, first_t, first_failure, last_t, passed_t, failing, error, op, "
            "misconception, feedback FROM progress")


class RoomRefused(Exception):
    """A join or attempt the room refuses; `status` is the HTTP status, the message says why in words."""

    def __init__(self, status: int, why: str):
        super().__init__(why)
        self.status = status


@dataclass(frozen=True)
class Thresholds:
    """A participant is stuck on an exercise not yet passed after `attempts` failed runs over at least
    `minutes`; one not seen (no check, no heartbeat) for `gone_minutes` is gone, neither stuck nor counted."""

    attempts: int = 3
    minutes: float = 3.0
    gone_minutes: float = 10.0


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Store:
    def __init__(self, path: Path):
        path = Path(path)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)  # the file exists, as its owner's only
        os.close(fd)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.executescript(SCHEMA)
        if "rid" not in {row[1] for row in self.db.execute("PRAGMA table_info(reports)")}:  # a room kept by 0.x
            self.db.execute("ALTER TABLE reports ADD COLUMN rid TEXT")
        self.db.executescript(INDEXES)
        # What the dashboard reads, mirrored in memory: this process is the only writer, and each write
        # re-reads the rows it changed, so the file stays the truth and a dashboard's state reads no rows.
        self._people: dict[int, tuple] = {r[0]: r[1:] for r in self.db.execute(PEOPLE)}
        self._rows: dict[tuple[int, str], dict] = {}
        self._joins: dict[int, list[float]] = {}
        for pid, t in self.db.execute("SELECT pid, t FROM joins ORDER BY t"):
            self._joins.setdefault(pid, []).append(t)
        for row in self._select(PROGRESS):
            self._rows[row["pid"], row["exercise"]] = row

    def _select(self, query: str, args: tuple = ()) -> list[dict]:
        self.db.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in self.db.execute(query, args)]
        finally:
            self.db.row_factory = None

    def _changed(self, pid: int, exercise: str | None = None) -> None:
        row = self.db.execute(PEOPLE + " WHERE pid = ?", (pid,)).fetchone()
        if row is not None:
            self._people[pid] = row[1:]
        if exercise is not None:
            for found in self._select(PROGRESS + " WHERE pid = ? AND exercise = ?", (pid, exercise)):
                self._rows[pid, exercise] = found

    # --- the room ----------------------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM meta"))

    def set_meta(self, values: dict[str, str]) -> None:
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET "
                                "value = excluded.value", values.items())

    # --- participants ------------------------------------------------------------------------------------
    def participant(self, pseudonym: str, secret: str | None) -> int:
        """The participant's id; RoomRefused(403) for a wrong secret or an unknown pseudonym."""
        row = self.db.execute("SELECT pid, secret FROM participants WHERE pseudonym = ?", (pseudonym,)).fetchone()
        if row is None or not (secret and row[1] and hmac.compare_digest(row[1], _hash(secret))):
            raise RoomRefused(403, say("workshop: not a participant"))
        return row[0]

    def hub_participant(self, pseudonym: str, seat: str, now: float) -> int:
        """On a hub, which vouched for the user: the participant, added the first time."""
        self.db.execute("INSERT INTO participants (pseudonym, secret, seat, joined, last_seen) "
                        "VALUES (?, NULL, ?, ?, ?) "
                        "ON CONFLICT (pseudonym) DO UPDATE SET last_seen = excluded.last_seen",
                        (pseudonym, seat, now, now))
        pid = self.db.execute("SELECT pid FROM participants WHERE pseudonym = ?", (pseudonym,)).fetchone()[0]
        self._changed(pid)
        return pid

    def add(self, pseudonym: str, secret: str | None, seat: str, now: float) -> int:
        cursor = self.db.execute("INSERT INTO participants (pseudonym, secret, seat, joined, last_seen) "
                                 "VALUES (?, ?, ?, ?, ?)",
                                 (pseudonym, _hash(secret) if secret else None, seat, now, now))
        pid = cursor.lastrowid
        assert pid is not None  # an INSERT that succeeded sets it
        self._changed(pid)
        self.joined(pid, now)
        return pid

    def joined(self, pid: int, now: float) -> None:
        """A join (check.join at the top of a notebook): when an exercise started, for this participant."""
        self.db.execute("INSERT INTO joins (pid, t) VALUES (?, ?)", (pid, now))
        self._joins.setdefault(pid, []).append(now)

    def join(self, seat: str, pseudonym: str | None, secret: str | None, now: float, cap: int,
             gone_minutes: float) -> tuple[str, str | None]:
        """(pseudonym, a new secret or None): a participant back (their secret checked, their seat updated if
        given), or a new one; RoomRefused(403) for a wrong secret, RoomRefused(503) when the room is full."""
        if pseudonym is not None:
            pid = self.participant(pseudonym, secret)
            self.db.execute("UPDATE participants SET last_seen = ?, seat = CASE WHEN ? = '' THEN seat ELSE ? END "
                            "WHERE pid = ?", (now, seat, seat, pid))
            self._changed(pid)
            self.joined(pid, now)
            return pseudonym, None
        if self.active(now, gone_minutes) >= cap:
            raise RoomRefused(503, say("workshop: room full", cap=cap))
        for _ in range(100):
            name = draw_pseudonym()
            if self.db.execute("SELECT 1 FROM participants WHERE pseudonym = ?", (name,)).fetchone() is None:
                break
        new = secrets.token_urlsafe(24)
        self.add(name, new, seat, now)
        return name, new

    def active(self, now: float, gone_minutes: float) -> int:
        since = now - gone_minutes * 60
        return sum(person[2] >= since for person in self._people.values())

    def seen(self, pid: int, now: float, flag: str | None = None) -> None:
        """A heartbeat, or a sticky note: 'stuck', 'done', or '' to take it down."""
        if flag is None:
            self.db.execute("UPDATE participants SET last_seen = ? WHERE pid = ?", (now, pid))
        else:
            self.db.execute("UPDATE participants SET last_seen = ?, flag = nullif(?, ''), flag_t = ? WHERE pid = ?",
                            (now, flag, now, pid))
        self._changed(pid)

    def left(self, pid: int) -> None:
        """check.leave(): shown as gone at once."""
        self.db.execute("UPDATE participants SET last_seen = 0, flag = NULL WHERE pid = ?", (pid,))
        self._changed(pid)

    # --- attempts ----------------------------------------------------------------------------------------
    def record(self, pid: int, attempt: Attempt, now: float, misconception: str | None) -> bool:
        """Adds one validated attempt (its op and error already the course's, or None), made `attempt.ago`
        seconds ago (never before the participant joined); False, changing nothing, for an id already counted
        (a report sent again because its answer was lost)."""
        failing = json.dumps(list(attempt.failing))
        failed = attempt.status in FAILED
        line_id = None
        with self.db:
            self.db.execute("BEGIN")
            if attempt.id is not None and self.db.execute("SELECT 1 FROM reports WHERE pid = ? AND rid = ?",
                                                          (pid, attempt.id)).fetchone():
                self.db.execute("UPDATE participants SET last_seen = ? WHERE pid = ?", (now, pid))
                return False
            joined = self.db.execute("SELECT joined FROM participants WHERE pid = ?", (pid,)).fetchone()[0]
            made = max(now - attempt.ago, min(joined, now))
            # a pass takes down a 'stuck' note
            self.db.execute("UPDATE participants SET last_seen = ?, flag = CASE WHEN ? AND flag = 'stuck' THEN NULL "
                            "ELSE flag END WHERE pid = ?", (now, attempt.status == Status.PASSED, pid))
            if attempt.line:
                line_id = hashlib.sha256(f"{attempt.exercise}\0{attempt.op}\0{attempt.line}".encode()).hexdigest()[:16]
                self.db.execute(
                    "INSERT INTO lines (id, exercise, op, line, reports) VALUES (?, ?, ?, ?, 1) "
                    "ON CONFLICT (id) DO UPDATE SET reports = reports + 1",
                    (line_id, attempt.exercise, attempt.op, attempt.line))
            self.db.execute(
                "INSERT INTO reports (pid, exercise, t, status, failing, error, op, misconception, line_id, rid) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (pid, attempt.exercise, made, attempt.status, failing, attempt.error, attempt.op, misconception,
                 line_id, attempt.id))
            self.db.execute(
                "INSERT INTO progress (pid, exercise, status, failures, first_t, first_failure, last_t, passed_t, "
                "failing, error, op, misconception, feedback) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?5, ?7, ?8, ?9, ?10, "
                "?11, ?12) ON CONFLICT (pid, exercise) DO UPDATE SET status = excluded.status, "
                "failures = failures + excluded.failures, last_t = excluded.last_t, "
                "first_failure = coalesce(first_failure, excluded.first_failure), "
                "passed_t = coalesce(passed_t, excluded.passed_t), failing = excluded.failing, "
                "error = excluded.error, op = excluded.op, misconception = excluded.misconception, "
                "feedback = excluded.feedback",
                (pid, attempt.exercise, attempt.status, int(failed), made, made if failed else None,
                 made if attempt.status == Status.PASSED else None, failing, attempt.error, attempt.op, misconception,
                 attempt.feedback))
        self._changed(pid, attempt.exercise)
        return True

    # --- hints -------------------------------------------------------------------------------------------
    def add_hint(self, exercise: str | None, text: str, now: float) -> None:
        self.db.execute("INSERT INTO hints (t, exercise, text) VALUES (?, ?, ?)", (now, exercise, text))

    def hints(self, limit: int = 20) -> list[tuple[int, float, str | None, str]]:
        return self.db.execute("SELECT id, t, exercise, text FROM hints ORDER BY id DESC LIMIT ?", (limit,)).fetchall()

    def deliver(self, pid: int, exercise: str | None) -> list[str]:
        """The hints this participant has not yet been given, for all or for `exercise`, oldest first (at most 3)."""
        rows = self.db.execute(
            "SELECT id, text FROM hints WHERE (exercise IS NULL OR exercise = ?) AND id NOT IN "
            "(SELECT hint FROM delivered WHERE pid = ?) ORDER BY id DESC LIMIT 3", (exercise, pid)).fetchall()
        if rows:
            self.db.executemany("INSERT OR IGNORE INTO delivered (pid, hint) VALUES (?, ?)",
                                [(pid, i) for i, _ in rows])
        return [text for _, text in reversed(rows)]

    # --- reading -----------------------------------------------------------------------------------------
    def progress(self) -> list[dict]:
        """One row per (participant, exercise) tried (from memory; not to be changed)."""
        return list(self._rows.values())

    def joins(self, pid: int) -> list[float]:
        """When the participant joined (check.join at the top of each notebook, and again after a restart)."""
        return self._joins.get(pid, [])

    def people(self) -> dict[int, tuple[str, str, float, str | None, float | None]]:
        """pid -> (pseudonym, seat, last_seen, flag, flag_t) of everyone who ever joined (from memory)."""
        return self._people

    def lines(self, limit: int = 50) -> list[tuple[str, str, str | None, str, int]]:
        """Distinct culprit lines shared with the second opt-in (id, exercise, op, line, reports), most frequent
        first."""
        return self.db.execute(
            "SELECT id, exercise, op, line, reports FROM lines ORDER BY reports DESC, id LIMIT ?", (limit,)).fetchall()

    def line(self, line_id: str) -> tuple[str, str | None, str] | None:
        return self.db.execute("SELECT exercise, op, line FROM lines WHERE id = ?", (line_id,)).fetchone()

    def attempt_counts(self) -> list[tuple[str, int, int]]:
        """All runs per exercise: (exercise, runs, failed runs)."""
        return self.db.execute("SELECT exercise, count(*), sum(status != 'passed') FROM reports "
                               "GROUP BY exercise").fetchall()

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
            "ORDER BY count(*) DESC, exercise, op").fetchall()

    def misconception_counts(self) -> list[tuple[str, int, int]]:
        """(misconception id, failed runs, participants) over the whole workshop."""
        return self.db.execute(
            "SELECT misconception, count(*), count(DISTINCT pid) FROM reports WHERE misconception IS NOT NULL "
            "GROUP BY misconception ORDER BY count(DISTINCT pid) DESC, misconception").fetchall()

    def close(self) -> None:
        self.db.close()

    def delete(self) -> None:
        """Removes the file and SQLite's own beside it."""
        self.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
