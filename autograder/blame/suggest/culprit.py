"""What the rewrite rules take (a culprit, as the locator's JSON report names it) and give (a rewrite)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...feedback.wording import say

Read = Callable[[str], "str | None"]
"""Source text of a file as the culprit names it, or None where it cannot be read."""


@dataclass(frozen=True)
class Culprit:
    """What the rules need from a locator report (its JSON report: book/reference/blame.md): plain strings and
    numbers."""

    op: str
    file: str
    line: int
    saved_op: str | None = None
    saved_file: str | None = None
    saved_line: int | None = None
    saved_code: str | None = None
    ops_on_line: tuple[str, ...] = ()
    chain: tuple[tuple[str, int], ...] = ()
    """The user's frames of the write, innermost first: (file, line)."""
    saver_chain: tuple[tuple[str, int], ...] = ()
    saved_as: str | None = None
    """"input" or "output": what the saved tensor was to the operation that saved it (None: not known)."""
    line_ran_again: bool = False
    """The saving line ran again after it saved the tensor: the tensor is from an earlier pass of a loop."""
    grad_mode: bool | None = None
    """Whether gradients were on when the culprit wrote (False inside `torch.no_grad()`)."""
    renumbered: tuple[tuple[int, int], ...] = ()
    """(line in the text the rules read, line in the user's file) where they differ: the grader's rules read
    the culprit's and the saver's lines alone, as lines 1 and 2, whatever their numbers in the answer."""

    def at(self, line: int | None) -> int | None:
        """A line of the text the rules read, as the user's file numbers it (for the words and the diff)."""
        return dict(self.renumbered).get(line, line) if line is not None else None

    @property
    def method(self) -> str:
        """The op's own name: `add_` for torch.Tensor.add_, `relu` for torch.nn.functional.relu."""
        return self.op.rsplit(".", 1)[-1]

    def saved(self) -> str:
        if self.saved_code and self.saved_line:
            return say("blame: the tensor saved by", code=self.saved_code, line=self.at(self.saved_line))
        return say("blame: a tensor saved")


@dataclass(frozen=True)
class Rewrite:
    kind: str
    """expand | out_of_place | clone_first | clone_saved | not_inplace | detach_state | restrict_backward | move_step"""
    file: str
    text: str
    """The whole file after the rewrite."""
    why: str
    contract: str = "same"
    """Which reference it must match (verify.py): "out_of_place" (the culprit call made out of place: what the
    rewrite claims), "same" (the write kept, saved tensors untouched) or "truncated" (a detached state)."""
