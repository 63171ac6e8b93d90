"""What the locator found, as a frozen value, turned into text and into the JSON report of
book/reference/blame.md, in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...feedback.wording import say
from .frames import Site


@dataclass(frozen=True)
class Operation:
    """An operation seen from the user's code: its name and the user's frames, innermost first."""

    op: str | None
    chain: tuple[Site, ...] = ()
    version: int | None = None
    """For a modification: the tensor's version right after it."""
    grad_mode: bool | None = None
    """For a modification: whether grad mode was on when it was made (False under `torch.no_grad()`)."""

    @property
    def site(self) -> Site | None:
        return self.chain[0] if self.chain else None

    def to_json(self) -> dict[str, Any]:
        s = self.site
        out: dict[str, Any] = {
            "op": self.op,
            "file": s.file if s else None,
            "line": s.line if s else None,
            "code": s.code if s else None,
            "function": s.function if s else None,
            "chain": [{"file": c.file, "line": c.line, "function": c.function, "code": c.code} for c in self.chain],
        }
        if self.version is not None:
            out["version"] = self.version
        if self.grad_mode is not None:
            out["grad_mode"] = self.grad_mode
        return out

    def where(self) -> str:
        s = self.site
        if s is None:
            return say("blame: no user frame")
        return say("blame: where code", site=s, code=s.code) if s.code else f"{s}"


@dataclass(frozen=True)
class TensorInfo:
    shape: tuple[int, ...]
    dtype: str
    expected_version: int
    found_version: int


@dataclass(frozen=True)
class Report:
    """One saved tensor found changed in backward: who changed it (all changes, culprit first), who saved it."""

    saved_by: Operation
    tensor: TensorInfo
    modifications: tuple[Operation, ...] = ()
    backward_node: str | None = None
    torch_message: str = field(default="", compare=False)
    """PyTorch's own wording for this error, as it would have raised it."""
    saved_as: str | None = None
    """"input" or "output": what the tensor was to the operation that saved it (None where torch cannot tell)."""
    line_ran_again: bool = False
    """The saving line saved tensors again after this one: the tensor is from an earlier pass through it (a
    loop that carried its graph, such as a recurrent state, into a later backward)."""

    @property
    def culprit(self) -> Operation | None:
        return self.modifications[0] if self.modifications else None

    def to_json(self) -> dict[str, Any]:
        t = self.tensor
        unseen: dict[str, Any] = {"op": None, "file": None, "line": None, "code": None, "function": None, "chain": []}
        return {
            "culprit": self.culprit.to_json() if self.culprit else unseen,
            "saved_by": self.saved_by.to_json() | {"saved_as": self.saved_as, "line_ran_again": self.line_ran_again},
            "tensor": {"shape": list(t.shape), "dtype": t.dtype, "expected_version": t.expected_version,
                       "found_version": t.found_version},
            "backward_node": self.backward_node,
            "modifications": [m.to_json() for m in self.modifications],
        }

    def summary(self) -> str:
        """One sentence: the culprit and the saver, for an error message or a grader's feedback line."""
        c = self.culprit
        saver = self.saved_by
        if c is None:
            return say("blame: summary unseen", saved_by=saver.op, saved_at=saver.where())
        return say("blame: summary", op=c.op, where=c.where(), saved_by=saver.op, saved_at=saver.where())

    def text(self) -> str:
        t = self.tensor
        c = self.culprit
        if c is not None:
            lines = [say("blame: report head", op=c.op, site=_site(c)), *_code(c)]
        else:
            lines = [say("blame: report head unseen")]
        lines.append(say("blame: report saved by", op=self.saved_by.op, site=_site(self.saved_by)))
        lines += _code(self.saved_by)
        lines.append(say("blame: report tensor", dtype=t.dtype, shape=list(t.shape), expected=t.expected_version,
                         found=t.found_version))
        if self.backward_node:
            lines.append(say("blame: report backward", node=self.backward_node))
        if c is not None and len(c.chain) > 1:
            lines.append(say("blame: report calls", calls=" -> ".join(
                say("blame: report call", function=s.function, site=s) for s in reversed(c.chain))))
        if len(self.modifications) > 1:
            lines.append(say("blame: report modifications", count=len(self.modifications)))
            for i, m in enumerate(self.modifications, 1):
                lines.append(say("blame: report modification", number=i, op=m.op, where=m.where(),
                                 version=m.version))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # IPython shows the report, not the dataclass
        p.text(self.text())


def _site(op: Operation) -> str:
    return str(op.site) if op.site else say("blame: no user frame")


def _code(op: Operation) -> list[str]:
    return [say("blame: report code", code=op.site.code)] if op.site and op.site.code else []


NO_REPORT: dict[str, Any] = {"culprit": None, "saved_by": None, "tensor": None, "backward_node": None,
                             "modifications": []}
"""The --json output of a run where no saved tensor was found modified."""
