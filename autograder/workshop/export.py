"""`serve --export DIR` (at every stop) and `workshop end --export DIR`: what a workshop leaves for its
retrospective. Aggregates only: no pseudonym, seat label, culprit line or feedback goes into these files.

Each export is a new folder, `DIR/workshop-CODE-YYYYmmdd-HHMMSS`, written beside it and renamed into place
when complete: an export never overwrites another, and a half-written one is never left under that name.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from ..feedback.wording import say
from .course import Course
from .net import StartError
from .storage import Store, Thresholds
from .views import state


def check_folder(folder: Path) -> Path:
    """The export folder, created if missing and proven writable now, at start (StartError otherwise)."""
    folder = folder.expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise StartError(say("workshop: export folder", folder=folder, why=e.strerror or e)) from None
    return folder.resolve()


def _write(path: Path, header: list[str], rows: list) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def export(store: Store, course: Course, code: str, now: float, thresholds: Thresholds, folder: Path) -> Path:
    """Writes the aggregates into a new folder under `folder`; returns it. It counts everyone who joined,
    gone or not (an export is taken when the notebooks have been closed), and measures minutes to pass from
    when the host started each exercise (kept in the room) or the participant's join."""
    starts = _starts(store)
    view = state(store, course, now, thresholds, room={"starts": starts}, whole_session=True)
    runs = {e: (n, failed) for e, n, failed in store.attempt_counts()}
    grid = [[g["exercise"], view["participants"], g["not_started"], g["failing"], g["passed"],
             "" if g["median_minutes"] is None else g["median_minutes"], *runs.get(g["exercise"], (0, 0))]
            for g in view["grid"]]
    checks = sorted(store.failing_check_counts().items(), key=lambda item: (-item[1], item[0]))
    wrong = [[course.by_id[m].exercise, course.by_id[m].label, runs_, people]
             for m, runs_, people in store.misconception_counts() if m in course.by_id]
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    work = Path(tempfile.mkdtemp(prefix=".export-", dir=folder))
    try:
        _write(work / "progress.csv", ["exercise", "participants", "not_started", "failing", "passed",
                                       "median_minutes_to_pass", "runs", "failed_runs"], grid)
        _write(work / "failing_checks.csv", ["exercise", "check", "failed_runs"], [[e, c, n] for (e, c), n in checks])
        _write(work / "culprit_ops.csv", ["exercise", "op", "failed_runs"], store.op_counts())
        _write(work / "misconceptions.csv", ["exercise", "misconception", "failed_runs", "participants"], wrong)
        grid_png(view["grid"], view["participants"], work / "grid.png")
        os.chmod(work, 0o755)
        for n in range(100):
            final = folder / (f"workshop-{code}-{stamp}" + (f"-{n}" if n else ""))
            try:
                final.mkdir()  # claims the name; never one that exists
            except FileExistsError:
                continue
            os.rename(work, final)  # onto the empty folder just claimed: complete, or not there
            return final
        raise OSError(say("workshop: no free export name", folder=folder))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _starts(store: Store) -> dict[str, float]:
    try:
        found = json.loads(store.meta().get("starts") or "{}")
    except ValueError:
        return {}
    return {k: v for k, v in found.items() if isinstance(v, int | float)} if isinstance(found, dict) else {}


def grid_png(grid: list[dict], participants: int, path: Path) -> Path:
    """The dashboard's grid as stacked bars, one per exercise."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [g["exercise"] for g in grid][::-1]
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(names) + 1.2), dpi=120)
    left = [0] * len(names)
    for key, color, label in (("passed", "#2e8540", "passed"), ("failing", "#e07b00", "failing"),
                              ("not_started", "#d6d6d6", "not started")):
        values = [g[key] for g in grid][::-1]
        ax.barh(names, values, left=left, color=color, label=label)
        left = [a + b for a, b in zip(left, values)]
    ax.set_xlabel(say("workshop: grid axis", participants=participants))
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title(say("workshop: grid title"))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
