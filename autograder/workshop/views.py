"""What the dashboard shows, as JSON, computed from the store. Three views, from safe to detailed:

- projector: aggregates only: the join panel, how many are stuck where, the likely misconceptions (labels
  matched from the checks' results, never code), the grid and pace, and what the host put in the spotlight;
- helper: adds people, by seat label and pseudonym, for helpers walking the room (never on the projector):
  the stuck sorted by how long and how often they failed, the sticky notes, and the feedback text of those
  who chose to share it;
- controls: adds what the host may project (shared culprit lines, misconceptions with their explanation),
  the hints sent, and the room's limits.

Counts are of the people here: a participant not seen (no check, no heartbeat from their kernel) for
`gone_minutes` is gone, counted apart, and never stuck.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from functools import lru_cache
from typing import Any, cast

from .course import Course
from .storage import Store, Thresholds

TOP = 5
SHOWN_STUCK = 50
"""People listed as stuck in the helpers' view (all are counted): more than a room's helpers can walk to."""
SHOWN = {"failed": "failing", "timed_out": "timed out", "crashed": "kernel died", "not_attempted": "starter, untouched"}


@lru_cache(maxsize=4096)
def _failing(text: str) -> tuple[str, ...]:
    """A progress row's failing checks (JSON text: few distinct values in a room, parsed once each)."""
    return tuple(json.loads(text))


def category(row) -> str:
    """not_started, failing or passed: the grid's column for one (participant, exercise). Someone who ran the
    untouched starter has run and failed: failing (and stuck in time), not "not started"."""
    if row["passed_t"] is not None:
        return "passed"
    return "not_started" if row["status"] == "not_attempted" and not row["failures"] else "failing"


def started(joins: list[float], firsts: list[float], first_t: float, host: float | None) -> float:
    """When a participant started an exercise they first checked at `first_t`: their first join (check.join, at
    the top of its notebook) since they first checked another exercise (`firsts`), else that first check;
    never before the host started it (`host`, when the host did before that check)."""
    after = max((t for t in firsts if t < first_t), default=float("-inf"))
    began = min((t for t in joins if after <= t <= first_t), default=first_t)
    return max(began, host) if host is not None and host <= first_t else began


def stuck_score(row, now: float, thresholds: Thresholds) -> float | None:
    """How stuck: minutes failing times failed runs, once both thresholds are met; None if not stuck."""
    if category(row) != "failing" or row["first_failure"] is None:
        return None
    minutes = (now - row["first_failure"]) / 60
    if row["failures"] < thresholds.attempts or minutes < thresholds.minutes:
        return None
    return minutes * row["failures"]


def state(store: Store, course: Course, now: float, thresholds: Thresholds, view: str = "projector",
          room: dict | None = None, whole_session: bool = False) -> dict:
    """The dashboard's data. `room`: what the server adds (join panel, spotlight, limits, version, when the
    host started each exercise). A pass counts whether or not its participant is still here (gone does not
    erase what they reached); `whole_session` (the export) counts everyone who joined as here."""
    room = room or {}
    gone_before = now - thresholds.gone_minutes * 60
    people = store.people()
    here = set(people) if whole_session else {pid for pid, person in people.items() if person[2] >= gone_before}
    starts = room.get("starts") or {}
    rows = [r for r in store.progress() if r["exercise"] in course.exercises]
    cells: dict[str, Counter] = {e: Counter() for e in course.exercises}
    minutes: dict[str, list[float]] = {e: [] for e in course.exercises}
    stuck: list[tuple[float, Any]] = []
    checks: Counter[tuple[str, str]] = Counter()
    ops: Counter[tuple[str, str]] = Counter()
    wrong: Counter[str] = Counter()
    firsts: dict[int, list[float]] = {}
    for row in rows:
        firsts.setdefault(row["pid"], []).append(row["first_t"])
    for row in rows:
        kind = category(row)
        if kind == "passed":
            began = started(store.joins(row["pid"]), firsts[row["pid"]], row["first_t"], starts.get(row["exercise"]))
            minutes[row["exercise"]].append(max(row["passed_t"] - began, 0) / 60)
            cells[row["exercise"]]["passed"] += 1  # here or gone: what they reached
        if row["pid"] not in here:
            continue
        cells[row["exercise"]]["here " + kind] += 1
        if kind == "failing":
            checks.update((row["exercise"], name) for name in _failing(row["failing"]))
            if row["op"]:
                ops[row["exercise"], row["op"]] += 1
            if row["misconception"] in course.by_id:
                wrong[row["misconception"]] += 1
        score = stuck_score(row, now, thresholds)
        if score is not None:
            stuck.append((score, row))
    stuck.sort(key=lambda item: -item[0])
    grid = []
    for exercise, counts in cells.items():
        passed, failing = counts["passed"], counts["here failing"]
        times = minutes[exercise]
        grid.append({"exercise": exercise, "title": course.titles.get(exercise, ""), "passed": passed,
                     "failing": failing, "not_started": max(len(here) - counts["here passed"] - failing, 0),
                     "median_minutes": round(statistics.median(times), 1) if times else None})
    per_exercise = Counter(row["exercise"] for _, row in stuck)
    out = {
        "version": room.get("version", 0), "room": room.get("room"), "join": room.get("join"),
        "participants": len(here), "gone": len(people) - len(here),
        "limits": room.get("limits"),
        "thresholds": {"attempts": thresholds.attempts, "minutes": thresholds.minutes,
                       "gone_minutes": thresholds.gone_minutes},
        "grid": grid,
        "stuck": [{"exercise": e, "count": per_exercise[e]} for e in cells if per_exercise[e]],
        "misconceptions": [{**course.by_id[m].to_json(), "participants": n} for m, n in wrong.most_common(TOP)],
        "top_checks": [{"exercise": e, "check": c, "participants": n} for (e, c), n in checks.most_common(TOP)],
        "top_ops": [{"exercise": e, "op": op, "participants": n} for (e, op), n in ops.most_common(TOP)],
        "spotlight": room.get("spotlight"),
    }
    if view in ("helper", "controls"):
        out["stuck_people"] = [_person_row(row, people[row["pid"]], now, course) for _, row in stuck[:SHOWN_STUCK]]
        # flag_t is set with the flag (Store.seen), so t is a time wherever f is a note
        out["notes"] = sorted(({"seat": s, "pseudonym": p, "note": f,
                                "minutes": round((now - cast(float, t)) / 60, 1)}
                               for pid, (p, s, _, f, t) in people.items() if f and pid in here),
                              key=lambda n: -n["minutes"])
        everyone: dict[int, dict] = {pid: {"pseudonym": p, "seat": s, "here": pid in here, "cells": {}}
                                     for pid, (p, s, _, _, _) in people.items()}
        for row in rows:
            everyone[row["pid"]]["cells"][row["exercise"]] = (
                "passed" if row["passed_t"] is not None else SHOWN.get(row["status"], "not started"))
        out["people"] = sorted(everyone.values(), key=lambda p: (not p["here"], p["seat"] or "~", p["pseudonym"]))
    if view == "controls":
        out["lines"] = [{"id": i, "exercise": e, "op": op, "line": line, "reports": n}
                        for i, e, op, line, n in store.lines()]
        out["hints"] = [{"exercise": e, "text": text, "minutes_ago": round((now - t) / 60, 1)}
                        for _, t, e, text in store.hints()]
        out["helpers"] = room.get("helpers")
    return out


def _person_row(row, person: tuple, now: float, course: Course) -> dict:
    found = course.by_id.get(row["misconception"])
    return {"seat": person[1], "pseudonym": person[0], "exercise": row["exercise"],
            "failures": row["failures"], "minutes": round((now - row["first_failure"]) / 60, 1),
            "status": SHOWN.get(row["status"], row["status"]), "error": row["error"], "op": row["op"],
            "misconception": found.label if found else None, "checks": list(_failing(row["failing"])),
            "feedback": row["feedback"]}
