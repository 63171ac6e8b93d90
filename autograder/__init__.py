"""A course on PyTorch's 'modified by an inplace operation' error: exercises, autograder, locator."""

from .selfcheck import check

__all__ = ["check"]
__version__ = "0.1.0"
