"""The participant's side: `check.join(URL)`, `check.preview()`, `check.leave()`, and what every `check()`
then sends. Opt-in only, standard library only, and it never raises into check() nor makes it wait.

What is sent, and nothing else (check.preview() prints it): a pseudonym drawn for this session, the seat
label the participant chose (optional), the exercise, pass/fail per public check, the error's class and
the operation the culprit locator named. The culprit line itself only with `check.join(..., share_line=True)`,
anonymised (strings and comments removed). No notebook, no other code, no host name, no machine id.
Reports go from one background thread with a short timeout; when the network is down they are dropped.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..result import Status
from .names import pseudonym as new_pseudonym
from .schema import DOTTED, MAX_SEAT, STATUSES, anonymise_line, parse

ENV = "AUTOGRADER_WORKSHOP"
"""Set to the workshop's URL (on a JupyterHub, by the hub's configuration) to join without `check.join`."""
TIMEOUT = 2.0


@dataclass
class Session:
    url: str
    pseudonym: str
    seat: str = ""
    share_line: bool = False
    hub_token: str | None = None  # only for the URL the hub's own configuration set in ENV


_session: Session | None = None
_left = False  # after check.leave(), ENV is ignored too
_last: tuple[Any, Any] | None = None  # the last check's (result, run report), for preview()
_sender: _Sender | None = None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # a report (and a hub token) goes to the joined URL only
        return None


class _Sender:
    """One daemon thread posting queued reports; a full queue or a failed post drops the report."""

    def __init__(self) -> None:
        self.queue: queue.Queue = queue.Queue(maxsize=32)
        self.opener = urllib.request.build_opener(_NoRedirect)
        self.idle = threading.Event()
        self.idle.set()
        threading.Thread(target=self._run, name="autograder-workshop", daemon=True).start()

    def send(self, url: str, body: bytes, headers: dict[str, str]) -> None:
        try:
            self.idle.clear()
            self.queue.put_nowait((url, body, headers))
        except queue.Full:
            pass

    def _run(self) -> None:
        while True:
            url, body, headers = self.queue.get()
            try:
                request = urllib.request.Request(url, data=body, method="POST", headers=headers)
                with self.opener.open(request, timeout=TIMEOUT) as response:
                    response.read(1024)
            except Exception:  # noqa: BLE001 - down, refused, slow: the check must not care
                pass
            if self.queue.empty():
                self.idle.set()

    def flush(self, seconds: float) -> None:
        self.idle.wait(seconds)


def _base(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.query or parts.fragment:
        raise ValueError(f"not a workshop URL: {url!r} (expected http(s)://host:port/CODE)")
    return url.strip().rstrip("/")


def join(url: str | None = None, *, seat: str = "", share_line: bool = False) -> str:
    """Joins the workshop at `url` (default: $AUTOGRADER_WORKSHOP); returns this session's pseudonym.

    `seat`: an optional label (at most 40 characters) so that a helper can find you. `share_line=True`
    also sends the culprit line (anonymised) of a failing check, which the host may put on the projector.
    """
    global _session, _left
    url = url or os.environ.get(ENV, "")
    base = _base(url)
    if not isinstance(seat, str) or len(seat) > MAX_SEAT or not seat.isprintable():
        raise ValueError(f"seat: printable text of at most {MAX_SEAT} characters")
    _session, _left = Session(base, new_pseudonym(), seat.strip(), bool(share_line)), False
    print(f"Joined the workshop at {base} as {_session.pseudonym}" + (f", seat {seat!r}" if seat else "") + ".")
    print("Each check() now also sends: your pseudonym, seat label, the exercise, pass/fail per check, the error's "
          "class and the culprit op" + (", and the culprit line (anonymised)" if share_line else "")
          + ". check.preview() shows exactly what; check.leave() stops.")
    try:
        with urllib.request.build_opener(_NoRedirect).open(base, timeout=TIMEOUT) as response:
            response.read(1024)
    except Exception as e:  # noqa: BLE001
        print(f"(The server did not answer yet: {type(e).__name__}. Your checks work as before; reports are "
              "sent when it does.)")
    return _session.pseudonym


def leave() -> None:
    """Stops reporting (what is already queued gets up to 2 s to go out)."""
    global _session, _left
    if _sender is not None:
        _sender.flush(TIMEOUT)
    was, _session, _left = _session, None, True
    print("Left the workshop: check() sends nothing from now on." if was else "Not in a workshop: nothing is sent.")


def _current() -> Session | None:
    """The session; the first time, one from $AUTOGRADER_WORKSHOP if it is set (a JupyterHub's configuration)."""
    global _session
    if _session is None and not _left and os.environ.get(ENV):
        token = os.environ.get("JUPYTERHUB_API_TOKEN")
        _session = Session(_base(os.environ[ENV]), new_pseudonym(), hub_token=token)
        print(f"(Reporting to the workshop at {_session.url}; check.preview() shows what, check.leave() stops.)")
    return _session


def _error(run_report: Any) -> tuple[str | None, str | None, str | None]:
    """The first error's class, and the op and line the culprit locator named for it."""
    errors = [getattr(run_report, "load_error", None)]
    errors += [o.error for o in (getattr(run_report, "outcomes", None) or {}).values()]
    for error in errors:
        if error is None:
            continue
        culprit = ((error.culprit or {}).get("culprit") or {}) if isinstance(error.culprit, dict) else {}
        op, line = culprit.get("op"), culprit.get("code")
        return (error.type if DOTTED.fullmatch(str(error.type)) else None,
                op if isinstance(op, str) and DOTTED.fullmatch(op) else None,
                line if isinstance(line, str) else None)
    return None, None, None


def payload(result: Any, run_report: Any, session: Session | None) -> dict:
    """The report for one check, exactly as it is sent."""
    error, op, line = _error(run_report)
    data = {
        "v": 1, "pseudonym": session.pseudonym if session else "(drawn-when-you-join-00)",
        "seat": session.seat if session else "", "exercise": result.exercise,
        "status": (result.status if result.status in STATUSES else Status.FAILED).value,
        "checks": [{"name": t.name, "passed": t.status == Status.PASSED} for t in result.tests
                   if t.visibility == "visible"][:16],
        "error": error, "op": op,
    }
    if session and session.share_line and line and result.status != Status.PASSED:
        data["line"] = anonymise_line(line)
    return data


def after_check(result: Any, run_report: Any) -> None:
    """Called by check(): remembers the check for preview() and, if joined, queues its report."""
    global _last, _sender
    try:
        _last = (result, run_report)
        session = _current()
        if session is None:
            return
        data = payload(result, run_report, session)
        body = json.dumps(data).encode()
        parse(body, (result.exercise,))  # never send what the server would refuse
        headers = {"Content-Type": "application/json", "User-Agent": "autograder-workshop"}
        if session.hub_token:
            headers["Authorization"] = f"token {session.hub_token}"
        if _sender is None:
            _sender = _Sender()
        _sender.send(session.url + "/report", body, headers)
    except Exception:  # noqa: BLE001 - a report must never break a check
        pass


def install(check: Any, after_check: list) -> None:
    """Gives the notebook's check() its workshop side: check.join, check.preview, check.leave, and a report
    queued after every check (only once joined)."""
    check.join, check.preview, check.leave = join, preview, leave
    if after_check_hook not in after_check:
        after_check.append(after_check_hook)


def after_check_hook(result: Any, run_report: Any) -> None:
    after_check(result, run_report)


def preview() -> dict | None:
    """Prints, and returns, exactly what the last check sent (or would send once you join)."""
    session = _current()
    if _last is None:
        print("No check has run yet: run check(\"<exercise>\") first, then check.preview().")
        return None
    data = payload(*_last, session)
    where = f"to {session.url}/report" if session else "if you joined (check.join(URL)); nothing is sent now"
    print(f"The last check sends, {where}:")
    print(json.dumps(data, indent=2, ensure_ascii=False))
    return data
