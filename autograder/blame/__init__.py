"""`autograder blame`: names the line that modified a tensor autograd saved (COURSE_SPEC §5).

    from autograder.blame import locate, explain
    with locate() as loc:            # around forward and backward
        loss = model(x).sum(); loss.backward()
    explain(train_step)              # in a notebook: prints the report instead of a traceback
"""

from .frames import Site, UserFrames
from .locator import ANSWER_FILE, Locator, culprit_for, explain, locate, report_of
from .report import Operation, Report, TensorInfo

__all__ = ["ANSWER_FILE", "Locator", "Operation", "Report", "Site", "TensorInfo",
           "UserFrames", "culprit_for", "explain", "locate", "report_of"]
