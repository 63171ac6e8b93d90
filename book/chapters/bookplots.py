"""Measurements and drawings the chapters share: the autograd graph with its saved tensors' versions,
allocated memory sampled after every aten op, and the size of a graph.

Kept out of the chapters so that their cells show the experiment, not the plotting code. Everything is
measured on the installed torch when the book is built.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
from torch.utils._python_dispatch import TorchDispatchMode


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


def draw_graph(root, saved: list[Saved], names: dict | None = None, title: str = ""):
    """The backward graph from `root` down, one box per node listing what it saved and at which version.

    A saved tensor whose current version differs from the one recorded is drawn in red: that is the
    tensor backward will refuse. `names` maps a leaf tensor to a label for its AccumulateGrad node.
    """
    names = names or {}
    depth = _depths(root)
    rows: dict[int, list] = {}
    for node, d in depth.items():
        rows.setdefault(d, []).append(node)
    pos = {}
    for d, nodes in rows.items():
        for i, node in enumerate(nodes):
            pos[node] = ((i + 1) / (len(nodes) + 1), -d)
    fig, ax = plt.subplots(figsize=(7.5, 1.25 * (len(rows) + 0.5)))
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
            label += f"\nsaved {s.attr}: expected v{s.expected}, now v{s.current}"
        ax.text(x, y, label, ha="center", va="center", fontsize=8, family="monospace",
                bbox={"boxstyle": "round", "fc": "#fde0dd" if bad else "#eef3fb", "ec": "#c0392b" if bad else "0.4"})
    ax.set_xlim(0, 1)
    ax.set_ylim(-len(rows) + 0.4, 0.6)
    ax.axis("off")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]


def _malloc_in_use():
    """Bytes the C allocator has handed out (heap and mmap), which is where torch's CPU tensors live."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
    except (OSError, AttributeError) as error:
        raise RuntimeError("measuring memory needs glibc >= 2.33 (mallinfo2); build the book on Linux") from error

    def in_use() -> int:
        info = libc.mallinfo2()
        return info.uordblks + info.hblkhd

    return in_use


class MemoryTimeline(TorchDispatchMode):
    """Allocated bytes (relative to entry), sampled after every aten op run inside the context."""

    def __init__(self):
        super().__init__()
        self._in_use = _malloc_in_use()
        self.samples: list[int] = []
        self.ops: list[str] = []

    def __enter__(self):
        self._base = self._in_use()
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.samples.append(self._in_use() - self._base)
        self.ops.append(func.__name__)
        return out

    @property
    def peak(self) -> int:
        return max(self.samples, default=0)


def _warm_up() -> None:
    # The first dispatch-mode run allocates tens of MB of one-time state; keep it out of measurements.
    with MemoryTimeline():
        torch.ones(2) + 1


_warm_up()
