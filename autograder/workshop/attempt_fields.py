"""The fields of a check that a workshop attempt is made of, read from the check's Result and RunReport: the
same function for the participant's client and for the catalogue's signatures (misconceptions.py), so that
the two can never read a run differently. Standard library only."""

from __future__ import annotations

from typing import Any

from ..core.status import Status
from .schema import DOTTED, STATUSES


def _culprit(error: Any) -> dict:
    culprit = getattr(error, "culprit", None)
    found = culprit.get("culprit") if isinstance(culprit, dict) else None
    return found if isinstance(found, dict) else {}


def attempt_fields(result: Any, run_report: Any) -> dict:
    """status, checks [(name, passed)], failing [names], error (class), op, grad_mode and line of the culprit
    write (the line only ever leaves with the second opt-in, anonymised)."""
    error_type = op = grad_mode = line = None
    errors = [getattr(run_report, "load_error", None)]
    errors += [o.error for o in (getattr(run_report, "outcomes", None) or {}).values()]
    for error in errors:
        if error is None:
            continue
        culprit = _culprit(error)
        error_type = error.type if DOTTED.fullmatch(str(error.type)) else None
        op = culprit.get("op") if isinstance(culprit.get("op"), str) and DOTTED.fullmatch(culprit["op"]) else None
        grad_mode = culprit.get("grad_mode") if isinstance(culprit.get("grad_mode"), bool) else None
        line = culprit.get("code") if isinstance(culprit.get("code"), str) else None
        break
    checks = [(t.name, t.status == Status.PASSED) for t in result.tests if t.visibility == "visible"][:16]
    status = result.status if result.status in STATUSES else Status.FAILED
    return {"status": Status(status).value, "checks": checks, "failing": [n for n, passed in checks if not passed],
            "error": error_type, "op": op, "grad_mode": grad_mode if op else None, "line": line}
