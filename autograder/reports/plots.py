"""The class overview's figures, as inline SVG: no files beside the page, nothing fetched, readable offline.

matplotlib's object API (Figure, not pyplot): no global figure state, safe in any thread, no GUI backend.
Text is drawn as paths, so the SVG carries no fonts and no text a browser would interpret.

Sizes are chosen for the page they go in (at most 64em, about 960 px, wide): a figure 10 inches wide is
drawn at about its own size there, so 10-point labels read as 13-pixel text. Statuses are told apart by
colour (Paul Tol's colour-blind-safe "bright" scheme) and by hatching, and named in a legend: never by
colour alone.
"""

from __future__ import annotations

import io
import math

import matplotlib
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ..core.status import Status
from ..feedback import language
from ..feedback.text import STATUS_NAMES
from ..feedback.wording import say

WIDTH = 10.0  # inches: about the page's width


def fonts() -> list[str]:
    """In Chinese, the first installed of language.CJK_FONTS (DejaVu Sans has no Chinese glyph, and its
    glyph-by-glyph fallback does not reach text drawn as paths)."""
    return [*language.CJK_FONTS, "DejaVu Sans"] if language.chosen() == "zh" else ["DejaVu Sans"]
STYLE = {  # status -> (label, face colour, hatch)
    Status.PASSED: ("passed", "#228833", ""),
    Status.FAILED: ("failed", "#CCBB44", "//"),
    Status.NOT_ATTEMPTED: ("not attempted", "#BBBBBB", ".."),
    Status.TIMED_OUT: ("timed out", "#66CCEE", "xx"),
    Status.CRASHED: ("crashed", "#EE6677", "\\\\"),
    Status.MALFORMED: ("malformed", "#AA3377", "++"),
}
"""How each status is drawn. grader_error has no score to plot (the overview counts it in its table)."""


def _text(label: str) -> str:
    """A label drawn as it is written: `$` would otherwise start matplotlib's mathtext."""
    return str(label).replace("$", r"\$")


def _svg(fig: Figure, salt: str) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": salt, "hatch.linewidth": 0.6,
                                "font.family": "sans-serif", "font.sans-serif": fonts()}):
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # inline: drop the XML prolog and DOCTYPE


def score_distribution(scores: dict[str, list[tuple[float, str]]], max_scores: dict[str, float],
                       titles: dict[str, str] | None = None) -> str:
    """One histogram per exercise (how many students got each score), each bar stacked by status."""
    titles = titles or {}
    n = max(1, len(scores))
    cols = min(4, n)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(WIDTH, 2.25 * rows + 0.5), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    present = [s for s in STYLE if any(status == s for values in scores.values() for _, status in values)]
    for ax, (exercise, values) in zip(axes.flat, scores.items()):
        top = max_scores.get(exercise) or max([v for v, _ in values] + [1.0])
        xs = list(range(int(math.ceil(top)) + 1))
        bottom = [0] * len(xs)
        for status in present:
            counts = [0] * len(xs)
            for value, s in values:
                if s == status:
                    counts[min(len(xs) - 1, max(0, int(round(value))))] += 1
            if any(counts):
                label, colour, hatch = STYLE[status]
                ax.bar(xs, counts, width=0.85, bottom=bottom, color=colour, hatch=hatch, edgecolor="#333333",
                       linewidth=0.5)
                bottom = [b + c for b, c in zip(bottom, counts)]
        ax.set_title(_text(titles.get(exercise, exercise)), fontsize=11)
        ax.set_xlim(-0.6, top + 0.6)
        ax.set_xticks([x for x in xs if x % 2 == 0 or top <= 6])
        ax.set_xlabel(say("reports: plot score"), fontsize=10)
        ax.set_ylabel(say("reports: plot students"), fontsize=10)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=10)
        ax.spines[["top", "right"]].set_visible(False)
    for ax in list(axes.flat)[len(scores):]:
        ax.set_visible(False)
    if present:
        handles = [Patch(facecolor=STYLE[s][1], hatch=STYLE[s][2], edgecolor="#333333", label=STATUS_NAMES[s])
                   for s in present]
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=10, frameon=False)
    return _svg(fig, "scores")


def failing_checks(counts: list[tuple[str, int]], top: int = 10) -> str:
    """The checks failed most often, as horizontal bars (most common on top), each labelled with its count."""
    shown = counts[:top] or [(say("reports: plot no failed checks"), 0)]
    fig = Figure(figsize=(WIDTH, 0.32 * len(shown) + 0.9), layout="constrained")
    ax = fig.subplots()
    labels = [_text(label) for label, _ in shown][::-1]
    values = [count for _, count in shown][::-1]
    bars = ax.barh(range(len(labels)), values, color="#CC6677", height=0.7)
    ax.set_yticks(range(len(labels)), labels=labels)
    ax.bar_label(bars, padding=3, fontsize=10)
    ax.set_xlabel(say("reports: plot failing the check"), fontsize=10)  # among those that ran
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.tick_params(labelsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig, "checks")
