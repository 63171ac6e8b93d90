"""The class overview's figures, as inline SVG: no files beside the page, nothing fetched, readable offline.

matplotlib's object API (Figure, not pyplot): no global figure state, safe in any thread, no GUI backend.
Text is drawn as paths, so the SVG carries no fonts and no text a browser would interpret.
"""

from __future__ import annotations

import io
import math

import matplotlib
from matplotlib.figure import Figure


def _svg(fig: Figure, salt: str) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": salt}):  # fixed ids: same input, same page
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # inline: drop the XML prolog and DOCTYPE


def score_distribution(scores: dict[str, list[float]], max_scores: dict[str, float]) -> str:
    """One histogram per exercise: how many submissions got each score."""
    n = max(1, len(scores))
    cols = min(4, n)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(3.2 * cols, 2.4 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, (exercise, values) in zip(axes.flat, scores.items()):
        top = max_scores.get(exercise) or max(values + [1.0])
        bins = [x - 0.5 for x in range(int(math.ceil(top)) + 2)]
        ax.hist(values, bins=bins, color="#4477aa", edgecolor="white")
        ax.set_title(exercise, fontsize=10)
        ax.set_xlim(-0.5, top + 0.5)
        ax.set_xlabel("score", fontsize=8)
        ax.set_ylabel("submissions", fontsize=8)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(scores):]:
        ax.set_visible(False)
    return _svg(fig, "scores")


def failing_checks(counts: list[tuple[str, int]], top: int = 15) -> str:
    """The checks failed most often, as horizontal bars (most common on top)."""
    shown = counts[:top] or [("(no failed checks)", 0)]
    fig = Figure(figsize=(7.5, 0.35 * len(shown) + 1.0), layout="constrained")
    ax = fig.subplots()
    labels = [label for label, _ in shown][::-1]
    values = [count for _, count in shown][::-1]
    ax.barh(labels, values, color="#cc6677")
    ax.set_xlabel("submissions failing the check", fontsize=9)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.tick_params(labelsize=8)
    return _svg(fig, "checks")
