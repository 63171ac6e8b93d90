"""`serve --export DIR`: what a workshop leaves for its retrospective, written at shutdown before the log
is deleted. Aggregates only: no pseudonym, seat label or culprit line goes into these files."""

from __future__ import annotations

import csv
from pathlib import Path

from .storage import Store, Thresholds
from .views import state


def _write(path: Path, header: list[str], rows: list) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def export(store: Store, exercises: tuple[str, ...], now: float, thresholds: Thresholds, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    view = state(store, exercises, now, thresholds)
    runs = {e: (n, failed) for e, n, failed in store.report_counts()}
    grid = [[g["exercise"], view["participants"], g["not_started"], g["failing"], g["passed"],
             "" if g["median_minutes"] is None else g["median_minutes"], *runs.get(g["exercise"], (0, 0))]
            for g in view["grid"]]
    checks = sorted(store.failing_check_counts().items(), key=lambda item: -item[1])
    written = [
        _write(folder / "progress.csv", ["exercise", "participants", "not_started", "failing", "passed",
                                         "median_minutes_to_pass", "runs", "failed_runs"], grid),
        _write(folder / "failing_checks.csv", ["exercise", "check", "failed_runs"], [[e, c, n] for (e, c), n in checks]),
        _write(folder / "culprit_ops.csv", ["exercise", "op", "failed_runs"], store.op_counts()),
    ]
    written.append(grid_png(view["grid"], view["participants"], folder / "grid.png"))
    return written


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
    ax.set_xlabel(f"participants (of {participants})")
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title("Where the room got to")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
