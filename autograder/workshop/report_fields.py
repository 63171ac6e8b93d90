"""Transitional, for client.py alone until it imports `attempt_fields` (then delete this file): the old name of
attempt_fields.py."""

from .attempt_fields import attempt_fields as report_fields

__all__ = ["report_fields"]
