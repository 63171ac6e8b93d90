"""PyTorch's in-place errors, as their messages read in 2.x releases old and new: one place for the patterns
the exercises, the feedback and the notebook's `predict()` match. Free of torch (predict never imports it)."""

from __future__ import annotations

import re

INPLACE_ERROR = re.compile(
    r"one of the variables needed for gradient computation has been modified by an inplace operation"
)
"""The version check at backward: a saved tensor was changed in place after it was saved."""

LEAF_INPLACE_ERROR = re.compile(
    r"a (view of a )?leaf Variable that requires grad (is being|has been) used in an in-place operation"
)
"""Refused at the write: an in-place op on a leaf that requires grad (or a view of one)."""

VIEW_MODIFIED = r"is a view and (is being|its base or another view of its base has been) modified inplace"
"""Refused at the write (or at the next use, where the write ran under no_grad): the tail of the message for
a view autograd cannot rebase, an output of a multi-output function or of a custom Function (a hook's);
`Output N of OP ` comes before it."""

VERSION_CHECK = re.compile(
    r"modified by an inplace operation: \[(?P<type>[^\[\]]+) \[(?P<shape>[\d, ]*)\]\]"
    r"(?:, which is output (?P<output>\d+) of (?P<op>\w+),)? is at version (?P<found>\d+); "
    r"expected version (?P<expected>\d+) instead"
)
"""INPLACE_ERROR's message whole, its parts named: the saved tensor's type and shape, the op clause (the tensor's
grad_fn when backward ran: `of Relu` in torch 2.13, `of ReluBackward0` in older releases; no clause for a leaf)
and the two versions."""
