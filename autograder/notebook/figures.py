"""The book's figures, drawn from what the installed torch does: the autograd graph with its saved
tensors' versions, storage and the views onto it, version counters over time, which tensors share what,
the lines a diagnosis points at, the ways one program can end, and what the error's op clause names.

The chapters measure; these draw. They live in the package, not beside the chapters, so that a chapter
downloaded from the book runs wherever the course is installed. matplotlib is imported when a figure is
drawn, never by `import autograder`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ..feedback import language
from ..feedback.wording import say


def _plt() -> Any:
    import matplotlib.pyplot as plt

    if language.chosen() == "zh":
        _chinese_glyphs(plt.rcParams)
    return plt


def _chinese_glyphs(rc: Any) -> None:
    """Where the course speaks Chinese, a figure's labels are drawn in the first installed of language.CJK_FONTS
    (they have Latin glyphs too), as the class report's charts are: matplotlib's own DejaVu has no Chinese glyph,
    and a generic family ("monospace") takes one font, the first of its list installed, not a list to fall back
    along."""
    fonts = language.CJK_FONTS
    for key, cjk in (("font.sans-serif", fonts), ("font.monospace", [f"{name} Mono" for name in fonts] + fonts)):
        if rc[key][:len(cjk)] != cjk:
            rc[key] = [*cjk, *(name for name in rc[key] if name not in cjk)]


@dataclass
class Saved:
    """One tensor a backward node saved, with its version when the snapshot was taken."""

    node: object
    attr: str
    tensor: torch.Tensor
    expected: int

    @property
    def current(self) -> int:
        # The unpacked tensor shares the saved tensor's version counter, so this reads the live version.
        return self.tensor._version


def graph_nodes(root) -> list:
    """Every node reachable from `root` (a grad_fn), root first."""
    seen, order, stack = set(), [], [root]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(nxt for nxt, _ in reversed(node.next_functions))
    return order


def snapshot_saved(root) -> list[Saved]:
    """The saved tensors of every node under `root`, read before anything modified them."""
    found = []
    for node in graph_nodes(root):
        for attr in dir(node):
            if attr.startswith("_saved_"):
                value = getattr(node, attr)
                if isinstance(value, torch.Tensor):
                    found.append(Saved(node, attr.removeprefix("_saved_"), value, value._version))
    return found


def _depths(root) -> dict:
    depth = {root: 0}
    for node in graph_nodes(root):  # parents come before children in this order often, not always: relax
        for nxt, _ in node.next_functions:
            if nxt is not None:
                depth[nxt] = max(depth.get(nxt, 0), depth[node] + 1)
    for _ in range(len(depth)):  # longest-path relaxation until stable (graphs here are small)
        changed = False
        for node in list(depth):
            for nxt, _ in node.next_functions:
                if nxt is not None and depth[nxt] < depth[node] + 1:
                    depth[nxt], changed = depth[node] + 1, True
        if not changed:
            break
    return depth


def draw_graph(root, saved: list[Saved], names: dict | None = None, title: str = "", ax=None):
    """The backward graph from `root` down, one box per node listing what it saved and at which version.

    A saved tensor whose current version differs from the one recorded is drawn in red: that is the
    tensor backward will refuse. `names` maps a leaf tensor to a label for its AccumulateGrad node.
    """
    plt = _plt()
    names = names or {}
    depth = _depths(root)
    rows: dict[int, list] = {}
    for node, d in depth.items():
        rows.setdefault(d, []).append(node)
    pos = {}
    for d, nodes in rows.items():
        for i, node in enumerate(nodes):
            pos[node] = ((i + 1) / (len(nodes) + 1), -d)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 1.25 * (len(rows) + 0.5)))
    else:
        fig = ax.figure
    for node, (x, y) in pos.items():
        for nxt, _ in node.next_functions:
            if nxt is not None:
                ax.annotate("", xy=pos[nxt], xytext=(x, y),
                            arrowprops={"arrowstyle": "->", "color": "0.5", "shrinkA": 14, "shrinkB": 14})
    for node, (x, y) in pos.items():
        label = node.name().removeprefix("torch::autograd::")
        if hasattr(node, "variable"):
            label += f"\n({names.get(id(node.variable), 'leaf')})"
        mine = [s for s in saved if s.node is node]
        bad = any(s.current != s.expected for s in mine)
        for s in mine:
            label += say("notebook: figure saved version", attr=s.attr, expected=s.expected, current=s.current)
        ax.text(x, y, label, ha="center", va="center", fontsize=8, family="monospace",
                bbox={"boxstyle": "round", "fc": "#fde0dd" if bad else "#eef3fb", "ec": "#c0392b" if bad else "0.4"})
    ax.set_xlim(0, 1)
    ax.set_ylim(-len(rows) + 0.4, 0.6)
    ax.axis("off")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def storage_indices(t: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
    """For each element of `t`, the index of the element of `base`'s storage it reads (t must share it)."""
    assert t.untyped_storage().data_ptr() == base.untyped_storage().data_ptr(), "t does not share base's storage"
    size = base.untyped_storage().nbytes() // base.element_size()
    offset = (t.data_ptr() - base.untyped_storage().data_ptr()) // t.element_size()
    return torch.arange(size).as_strided(t.shape, t.stride(), offset)


def _cells(ax, grid: torch.Tensor, colours, x0: float = 0.0, y0: float = 0.0) -> tuple[int, int]:
    """Draws `grid` (storage indices) as cells of size 1 with their top-left corner at (x0, y0)."""
    plt = _plt()
    grid = grid.reshape(1, -1) if grid.dim() < 2 else grid.reshape(grid.shape[0], -1)
    rows, cols = grid.shape
    for r in range(rows):
        for c in range(cols):
            index = int(grid[r, c])
            ax.add_patch(plt.Rectangle((x0 + c, y0 - r - 1), 1, 1, fc=colours(index), ec="0.3"))
            ax.text(x0 + c + 0.5, y0 - r - 0.5, f"[{index}]", ha="center", va="center", fontsize=8,
                    family="monospace")
    return rows, cols


def draw_storage(base: torch.Tensor, views: dict[str, torch.Tensor], title: str = ""):
    """The storage of `base` as a strip of numbered cells, and under it each tensor in `views` drawn in its
    own shape, every element showing (and coloured as) the storage cell it reads."""
    plt = _plt()
    size = base.untyped_storage().nbytes() // base.element_size()
    palette = plt.get_cmap("tab20")

    def colours(index: int):
        return (*palette(index % 20)[:3], 0.55)

    grids = {name: storage_indices(view, base) for name, view in views.items()}
    widths = [g.shape[-1] if g.dim() else 1 for g in grids.values()]
    heights = [g.shape[0] if g.dim() == 2 else 1 for g in grids.values()]
    gap = 1.6
    total = max(size, sum(widths) + gap * (len(widths) - 1))
    fig, ax = plt.subplots(figsize=(0.5 * total + 0.6, 0.5 * (max(heights) + 4.5)))
    _cells(ax, torch.arange(size), colours, (total - size) / 2, 0)
    ax.text(total / 2, 0.25, title or say("notebook: figure storage"), ha="center", va="bottom", fontsize=10)
    x = (total - (sum(widths) + gap * (len(widths) - 1))) / 2
    for (name, view), width in zip(views.items(), widths):
        ax.text(x + width / 2, -2.1, f"{name}\nstride {view.stride()}", ha="center", va="bottom", fontsize=8,
                family="monospace")
        _cells(ax, grids[name], colours, x, -2.2)
        x += width + gap
    ax.set_xlim(-0.2, total + 0.2)
    ax.set_ylim(-2.4 - max(heights), 1.0)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout()
    return fig


def draw_timeline(steps: list[str], versions: dict[str, list], saved: dict[str, int] | None = None, title: str = ""):
    """Version counters over time: one row per tensor, one column per program step, each cell the tensor's
    `_version` after that step (blank where the tensor does not exist yet, "n/a" where it has no counter).

    `saved` maps a row to the version an op recorded when it saved that tensor: cells of that row at any
    other version are drawn in red, the state in which backward would refuse it.
    """
    plt = _plt()
    saved = saved or {}
    fig, ax = plt.subplots(figsize=(2.2 + 1.5 * len(steps), 1.6 + 0.55 * len(versions)))
    for r, (name, row) in enumerate(versions.items()):
        for c, value in enumerate(row):
            if value is None:
                continue
            bad = name in saved and isinstance(value, int) and value != saved[name]
            shade = "#fde0dd" if bad else ("#eef3fb" if value in (0, "n/a") else "#c6dbef")
            ax.add_patch(plt.Rectangle((c, -r - 1), 1, 1, fc=shade, ec="#c0392b" if bad else "0.5"))
            ax.text(c + 0.5, -r - 0.5, str(value), ha="center", va="center", fontsize=10, family="monospace")
        note = f"  (saved at v{saved[name]})" if name in saved else ""
        ax.text(-0.1, -r - 0.5, name + note, ha="right", va="center", fontsize=9, family="monospace")
    for c, step in enumerate(steps):
        ax.text(c + 0.5, 0.15, step, ha="left", va="bottom", rotation=25, fontsize=8, family="monospace")
    left = -0.2 - 0.11 * max(len(n) + (16 if n in saved else 0) for n in versions)
    ax.set_xlim(left, len(steps) + 0.1)
    ax.set_ylim(-len(versions) - 0.8, 1.9)
    ax.axis("off")
    if title:   # under the grid: the step labels above it need the room
        ax.text(0, -len(versions) - 0.25, title, ha="left", va="top", fontsize=10)
    fig.tight_layout()
    return fig


def counter_groups(tensors: dict[str, torch.Tensor]) -> list[set[str]]:
    """Which of `tensors` share a version counter, found by experiment: a no-op write (`mul_(1)`, under
    no_grad) through each, and a look at whose `_version` moved."""
    groups: list[set[str]] = []
    for t in tensors.values():
        before = {n: u._version for n, u in tensors.items()}
        with torch.no_grad():
            t.mul_(1)
        moved = {n for n, u in tensors.items() if u._version != before[n]}
        for group in groups:
            if group & moved:
                group |= moved
                break
        else:
            groups.append(moved)
    return groups


def draw_links(columns: list[tuple[str, list[str]]], links: list[tuple[tuple[int, int], tuple[int, int]]],
               title: str = ""):
    """Boxes in columns, and arrows between them: `links` are ((column, row), (column, row)) pairs."""
    plt = _plt()
    height = max(len(items) for _, items in columns)
    fig, ax = plt.subplots(figsize=(2.9 * len(columns) + 0.6, 0.75 * height + 1.0))
    boxes = {}
    for c, (heading, items) in enumerate(columns):
        ax.text(c, 0.55, heading, ha="center", va="bottom", fontsize=10, weight="bold")
        for r, item in enumerate(items):
            y = -r * (height - 1) / max(len(items) - 1, 1) if len(items) > 1 else -(height - 1) / 2
            boxes[(c, r)] = ax.text(c, y, item, ha="center", va="center", fontsize=8, family="monospace",
                                    bbox={"boxstyle": "round", "fc": "#eef3fb", "ec": "0.4"})
    for start, end in links:
        leftward = end[0] < start[0]   # arrows leave and enter the boxes at their sides
        ax.annotate("", xy=(1.0 if leftward else 0.0, 0.5), xycoords=boxes[end],
                    xytext=(0.0 if leftward else 1.0, 0.5), textcoords=boxes[start],
                    arrowprops={"arrowstyle": "->", "color": "0.35", "shrinkA": 4, "shrinkB": 4})
    ax.set_xlim(-0.7, len(columns) - 0.3)
    ax.set_ylim(-height + 0.4, 0.9)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def draw_pointers(lines: list[str], marks: dict[str, int], title: str = ""):
    """Source lines, numbered, and for each label in `marks` an arrow to the line (an index into `lines`)
    it points at: what each diagnostic names. Labels that point at one line are stacked beside it."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(lines) + 0.8))
    for i, line in enumerate(lines):
        ax.text(0.0, -i, f"{i + 1:>2}  {line}", ha="left", va="center", fontsize=9, family="monospace")
    palette = plt.get_cmap("tab10")
    on_line = {index: [label for label, i in marks.items() if i == index] for index in marks.values()}
    for k, (label, index) in enumerate(marks.items()):
        same = on_line[index]
        offset = 0.0 if len(same) == 1 else 0.4 - 0.8 * same.index(label) / (len(same) - 1)
        ax.annotate(label, xy=(0.62, -index), xytext=(0.72, -index + offset), fontsize=9, color=palette(k),
                    va="center", arrowprops={"arrowstyle": "->", "color": palette(k)})
    ax.set_xlim(0, 1.2)
    ax.set_ylim(-len(lines) + 0.3, 0.8)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    fig.tight_layout()
    return fig


VERDICT_COLOURS = {"error": ("#fdebd0", "#d35400"), "wrong": ("#fde0dd", "#c0392b"),
                   "right": ("#e5f5e0", "#2e7d32")}
"""Fill and edge of a path's last box: the error was raised, the gradient came out wrong, or right."""


def draw_paths(rows: list[tuple[str, list[str], str, str]], title: str = ""):
    """One row per way of running the same program: a label, the stages a value goes through (boxes,
    left to right, joined by arrows), and what came out, as (text, verdict) with verdict one of
    `VERDICT_COLOURS` ('error', 'wrong', 'right'), which colours the last box. The chapter measures the
    stages and the verdicts; this only lays them out."""
    plt = _plt()
    width = max(len(stages) for _, stages, _, _ in rows) + 1
    fig, ax = plt.subplots(figsize=(1.4 + 2.0 * width, 0.3 + 0.95 * len(rows)))
    for r, (label, stages, outcome, verdict) in enumerate(rows):
        y = -r
        ax.text(-0.55, y, label, ha="right", va="center", fontsize=9, weight="bold")
        boxes = [ax.text(c, y, stage, ha="center", va="center", fontsize=7.5, family="monospace",
                         bbox={"boxstyle": "round", "fc": "#eef3fb", "ec": "0.4"})
                 for c, stage in enumerate(stages)]
        fill, edge = VERDICT_COLOURS[verdict]
        boxes.append(ax.text(width - 1, y, outcome, ha="center", va="center", fontsize=7.5, weight="bold",
                             bbox={"boxstyle": "round", "fc": fill, "ec": edge, "lw": 1.5}))
        for start, end in zip(boxes, boxes[1:]):
            ax.annotate("", xy=(0.0, 0.5), xycoords=end, xytext=(1.0, 0.5), textcoords=start,
                        arrowprops={"arrowstyle": "->", "color": "0.35", "shrinkA": 3, "shrinkB": 3})
    ax.set_xlim(-0.6, width - 0.4)
    ax.set_ylim(-len(rows) + 0.45, 0.55)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    fig.tight_layout()
    return fig




def draw_named(rows: list[tuple[str, list[str], int | None, str]], title: str = ""):
    """One row per program: the life of the tensor backward refused, as boxes left to right (what made it,
    what saved it, what wrote it), then the error's clause. `named` is the index of the box the clause
    names (None: no box), drawn highlighted with an arrow from the clause back to it. The chapter decides
    which box is named, from the message it caught; this only lays the rows out."""
    plt = _plt()
    width = max(len(stages) for _, stages, _, _ in rows) + 1
    fig, ax = plt.subplots(figsize=(1.6 + 2.1 * width, 0.4 + 1.15 * len(rows)))
    for r, (label, stages, named, clause) in enumerate(rows):
        y = -1.15 * r
        ax.text(-0.6, y, label, ha="right", va="center", fontsize=8.5, family="monospace")
        boxes = []
        for c, stage in enumerate(stages):
            hit = c == named
            boxes.append(ax.text(c, y, stage, ha="center", va="center", fontsize=7.5, family="monospace",
                                 weight="bold" if hit else "normal",
                                 bbox={"boxstyle": "round", "fc": "#fdebd0" if hit else "#eef3fb",
                                       "ec": "#d35400" if hit else "0.4", "lw": 1.8 if hit else 1.0}))
        last = ax.text(width - 1, y, clause, ha="center", va="center", fontsize=7.5, weight="bold",
                       bbox={"boxstyle": "round", "fc": "#fde0dd", "ec": "#c0392b", "lw": 1.5})
        for start, end in zip([*boxes, last], [*boxes, last][1:]):
            ax.annotate("", xy=(0.0, 0.5), xycoords=end, xytext=(1.0, 0.5), textcoords=start,
                        arrowprops={"arrowstyle": "->", "color": "0.35", "shrinkA": 3, "shrinkB": 3})
        if named is not None:
            ax.annotate("", xy=(0.5, 1.0), xycoords=boxes[named], xytext=(0.5, 1.0), textcoords=last,
                        arrowprops={"arrowstyle": "->", "color": "#d35400", "lw": 1.4,
                                    "connectionstyle": "arc3,rad=0.25", "shrinkA": 2, "shrinkB": 2})
    ax.set_xlim(-0.7, width - 0.3)
    ax.set_ylim(-1.15 * (len(rows) - 1) - 0.6, 1.05)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    fig.tight_layout()
    return fig
