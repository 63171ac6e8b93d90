"""An error raised on hidden inputs, as a student may read it: the kind of PyTorch error it is, and nothing
else of it.

The principle: nothing derived from a hidden trial's run reaches text unless it is salt-independent by
construction. A hidden trial's error keeps only which of a closed set of fixed texts describes it (PyTorch's
in-place error, its leaf error, or any other error), the few bits a submission could also tell by which checks
pass. Never its message (it may hold values), its class (an answer may define a thousand, or pick among
Python's), the line it raised at or its text (a thousand lines, a branch each, hold ten bits; and where the
public trials met several lines, a hidden input could still pick among them), nor the culprit locator's sites
(their lines, and the ops, which an answer could pick by a hidden value). Where the public trials themselves
raised, the visible checks say it all in full, on inputs anyone may see.

So no name read from a hidden trial is shown either: not an op name the locator read from the answer's frames
(an answer can name a function `torch.x` followed by the hidden values), and not even one torch really has
(an answer can pick which of torch's ops runs by a hidden value).
"""

from __future__ import annotations

from ..core.messages import INPLACE_ERROR, LEAF_INPLACE_ERROR
from ..core.outcome import CLASS_NOT_SHOWN, ErrorInfo
from .wording import say


def redacted(error: ErrorInfo) -> ErrorInfo:
    """The error as it may be shown for a hidden trial: an exception whose class is not shown (CLASS_NOT_SHOWN),
    with the fixed words of PyTorch's error where it is one (INPLACE_ERROR or LEAF_INPLACE_ERROR) and no other
    part of its message; no line, no code, no culprit."""
    if error.type == "TamperError":  # written by the guard from torch's own attribute names, never a trial's
        return ErrorInfo(error.type, error.message)
    kind = INPLACE_ERROR.search(error.message) or LEAF_INPLACE_ERROR.search(error.message)
    message = f"{kind.group(0)} {say('rest not shown')}" if kind else say("message not shown")
    return ErrorInfo(CLASS_NOT_SHOWN, message)
