"""What the dashboard shows, as JSON, computed from the store. Three views, from safe to detailed:

- projector: aggregates only (the grid, pace, how many are stuck where, the commonest failing checks and
  culprit ops) and the one culprit line the host put in the spotlight;
- helper: adds seat labels and pseudonyms, for assistants walking the room (never on the projector);
- controls: adds the shared culprit lines the host may put in the spotlight (anonymised, without names).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter

from .storage import Store, Thresholds

TOP = 5


def category(row) -> str:
    """not_started, failing or passed: the grid's column for one (participant, exercise)."""
    if row["passed_t"] is not None:
        return "passed"
    return "failing" if row["status"] == "failed" else "not_started"


def is_stuck(row, now: float, thresholds: Thresholds) -> bool:
    return (category(row) == "failing" and row["first_failure"] is not None
            and (row["failures"] >= thresholds.attempts or now - row["first_failure"] >= thresholds.minutes * 60))


def state(store: Store, exercises: tuple[str, ...], now: float, thresholds: Thresholds, view: str = "projector",
          spotlight: dict | None = None) -> dict:
    rows = store.progress()
    seats = store.seats()
    total = len(seats)
    cells: dict[str, Counter] = {e: Counter() for e in exercises}
    minutes: dict[str, list[float]] = {e: [] for e in exercises}
    stuck, checks, ops = [], Counter(), Counter()
    for row in rows:
        kind = category(row)
        cells.setdefault(row["exercise"], Counter())[kind] += 1
        if kind == "passed":
            minutes.setdefault(row["exercise"], []).append((row["passed_t"] - row["first_t"]) / 60)
        if kind == "failing":
            checks.update((row["exercise"], name) for name in json.loads(row["failing"]))
            if row["op"]:
                ops[row["op"]] += 1
        if is_stuck(row, now, thresholds):
            stuck.append(row)
    grid = []
    for exercise, counts in cells.items():
        passed, failing = counts["passed"], counts["failing"]
        times = minutes.get(exercise) or []
        grid.append({"exercise": exercise, "passed": passed, "failing": failing,
                     "not_started": max(total - passed - failing, 0),
                     "median_minutes": round(statistics.median(times), 1) if times else None})
    per_exercise = Counter(row["exercise"] for row in stuck)
    out = {
        "participants": total,
        "thresholds": {"attempts": thresholds.attempts, "minutes": thresholds.minutes},
        "grid": grid,
        "stuck": [{"exercise": e, "count": per_exercise[e]} for e in cells if per_exercise[e]],
        "top_checks": [{"exercise": e, "check": c, "participants": n} for (e, c), n in checks.most_common(TOP)],
        "top_ops": [{"op": op, "participants": n} for op, n in ops.most_common(TOP)],
        "spotlight": spotlight,
    }
    if view in ("helper", "controls"):
        out["stuck_people"] = [
            {"seat": r["seat"], "pseudonym": r["pseudonym"], "exercise": r["exercise"], "failures": r["failures"],
             "minutes": round((now - r["first_failure"]) / 60, 1), "error": r["error"], "op": r["op"],
             "checks": json.loads(r["failing"])}
            for r in sorted(stuck, key=lambda r: r["first_failure"])]
        people: dict[str, dict] = {p: {"pseudonym": p, "seat": s, "cells": {}} for p, s in seats}
        for row in rows:
            people[row["pseudonym"]]["cells"][row["exercise"]] = category(row)
        out["people"] = list(people.values())
    if view == "controls":
        out["lines"] = [{"id": i, "exercise": e, "op": op, "line": line, "reports": n}
                        for i, e, op, line, n in store.lines()]
    return out
