"""The participant's side: `check.join(URL)`, `check.preview()`, `check.stuck()`, `check.done()`,
`check.leave()`, and what every `check()` then sends. Opt-in only, standard library only; it never raises
into check(), and a check waits at most WAIT seconds for its report's answer (not at all while the server
is known to be down), then says in one line whether the report arrived.

What is sent, and nothing else (check.preview() prints it): the pseudonym and secret the server gave at
join, the exercise, pass/fail per public check, the error's class, the op the culprit locator named and
whether grad mode was on at that write. The culprit line only with `share_line=True` (anonymised), the
feedback text only with `share_feedback=True`. No notebook, no other code, no host name, no machine id.
The pseudonym is kept on this machine (identity.py): a new kernel or another notebook that joins the same
room is the same participant.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from . import identity
from .report_fields import report_fields
from .schema import MAX_SEAT, VERSION, anonymise_line, clean_feedback
from .sender import OPENER, Heartbeat, Sender, post

ENV = "AUTOGRADER_WORKSHOP"
"""Set to the workshop's URL (on a JupyterHub, by the hub's configuration) to join without `check.join`."""
WAIT = 1.0
HUB_PSEUDONYM = "hub-user-00"  # on a hub the server names the participant from the hub's token


class JoinError(RuntimeError):
    """check.join could not join: the message says why and what to do."""


@dataclass
class Session:
    url: str
    pseudonym: str
    secret: str | None = None
    room: str = ""
    share_line: bool = False
    share_feedback: bool = False
    hub_token: str | None = None  # only for the URL the hub's own configuration set in ENV

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.hub_token}"} if self.hub_token else {}


_session: Session | None = None
_left = False  # after check.leave(), ENV is ignored too
_last: tuple[Any, Any] | None = None  # the last check's (result, run report), for preview()
_sender: Sender | None = None
_heartbeat: Heartbeat | None = None
_hints: list[str] = []  # hints the heartbeat brought, printed with the next check


def _base(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.query or parts.fragment:
        raise ValueError(f"not a workshop URL: {url!r} (expected http(s)://host:port/CODE)")
    return url.strip().rstrip("/")


def _where(base: str) -> str:
    parts = urlsplit(base)
    return parts.netloc


def _verify(base: str) -> str:
    """The room id the server at `base` answers with; JoinError in words when it cannot be reached or the code
    is wrong."""
    code = base.rsplit("/", 1)[-1]
    try:
        with OPENER.open(base, timeout=5) as response:
            info = json.loads(response.read(4096))
    except urllib.error.HTTPError as e:
        if e.code == 404:
            raise JoinError(f"No workshop with the code {code!r} at {_where(base)} (HTTP 404). Check the code on "
                            "the projector: it is the last part of the URL.") from None
        raise JoinError(f"The server at {_where(base)} refused to join (HTTP {e.code}).") from None
    except (urllib.error.URLError, OSError) as e:
        raise JoinError(f"Cannot reach the workshop server at {_where(base)} ({getattr(e, 'reason', e)}). Check the "
                        "URL, that this computer is on the room's network, and that the server runs.") from None
    except ValueError:
        raise JoinError(f"{_where(base)} answered, but it is not a workshop server.") from None
    if not isinstance(info, dict) or info.get("workshop") is not True or not isinstance(info.get("room"), str):
        raise JoinError(f"{_where(base)} answered, but it is not a workshop server.")
    return info["room"]


def join(url: str | None = None, *, seat: str = "", share_line: bool = False, share_feedback: bool = False) -> None:
    """Joins the workshop at `url` (default: $AUTOGRADER_WORKSHOP); JoinError when it cannot.

    `seat`: an optional label (at most 40 characters) so that a helper can find you. `share_line=True` also
    sends the culprit line (anonymised) of a failing check, which the host may put on the projector;
    `share_feedback=True` sends the feedback text check() printed, which only helpers see.
    """
    global _session, _left, _heartbeat
    base = _base(url or os.environ.get(ENV, ""))
    if not isinstance(seat, str) or len(seat) > MAX_SEAT or not seat.isprintable():
        raise ValueError(f"seat: printable text of at most {MAX_SEAT} characters")
    room = _verify(base)
    kept = identity.load(room)
    request = {"v": VERSION, "seat": seat.strip()}
    delivery = post(base + "/join", {**request, "pseudonym": kept[0], "secret": kept[1]} if kept else request, {}, 5)
    if not delivery.ok and kept and delivery.why.startswith("HTTP 403"):
        identity.forget(room)  # not this room's any more: join as someone new
        kept, delivery = None, post(base + "/join", request, {}, 5)
    if not delivery.ok:
        raise JoinError(f"Could not join the workshop at {_where(base)}: {delivery.why}")
    name, secret = delivery.answer.get("pseudonym"), delivery.answer.get("secret") or (kept[1] if kept else None)
    if not isinstance(name, str) or not isinstance(secret, str):
        raise JoinError(f"{_where(base)} answered the join, but not as a workshop server does.")
    identity.keep(room, name, secret)
    _session, _left = Session(base, name, secret, room, bool(share_line), bool(share_feedback)), False
    print(f"Joined the workshop at {_where(base)} as {name}" + (f", seat {seat.strip()!r}" if seat.strip() else "")
          + (" (the same participant as before)." if kept else "."))
    print("Each check() now also sends: your pseudonym, the exercise, pass/fail per check, the error's class and "
          "the culprit op" + (", the culprit line (anonymised)" if share_line else "")
          + (", the feedback text (helpers only)" if share_feedback else "")
          + ". check.preview() shows exactly what; check.stuck() asks for help; check.leave() stops.")
    for exercise in identity.died(room):
        _send({**_empty(exercise, "crashed")})
        print(f"(Your last kernel died during check({exercise!r}); the helpers see it.)")
    if _heartbeat is None:
        _heartbeat = Heartbeat(_beat)
    _heartbeat.seconds = float(delivery.answer.get("heartbeat_s") or 60)


def _empty(exercise: str, status: str) -> dict:
    session = _session
    assert session is not None  # called once joined
    return {"v": VERSION, "pseudonym": session.pseudonym, "secret": session.secret, "exercise": exercise,
            "status": status, "checks": []}


def _beat() -> None:
    session = _session
    if session is not None:
        data = {"v": VERSION, "pseudonym": session.pseudonym, "secret": session.secret, "kind": "seen"}
        done = post(f"{session.url}/event", {k: v for k, v in data.items() if v is not None}, session.headers())
        _hints.extend(h for h in done.answer.get("hints", []) if isinstance(h, str))


def _current() -> Session | None:
    """The session; the first time, one from $AUTOGRADER_WORKSHOP if it is set (a JupyterHub's configuration)."""
    global _session, _left, _heartbeat
    if _session is None and not _left and os.environ.get(ENV):
        token = os.environ.get("JUPYTERHUB_API_TOKEN")
        if token:
            _session = Session(_base(os.environ[ENV]), HUB_PSEUDONYM, hub_token=token)
            print(f"(Reporting to the workshop at {_session.url}; check.preview() shows what, check.leave() stops.)")
            if _heartbeat is None:
                _heartbeat = Heartbeat(_beat)
        else:
            try:
                join(os.environ[ENV])
            except (JoinError, ValueError) as e:
                _left = True
                print(f"(Not reporting to the workshop: {e})")
    return _session


def payload(result: Any, run_report: Any, session: Session | None) -> dict:
    """The report for one check, exactly as it is sent."""
    fields = report_fields(result, run_report)
    data = {"v": VERSION, "pseudonym": session.pseudonym if session else "(given-when-you-join-00)",
            "secret": "(kept on this machine)" if session and session.secret else None,
            "exercise": result.exercise, "status": fields["status"],
            "checks": [{"name": n, "passed": p} for n, p in fields["checks"]],
            "error": fields["error"], "op": fields["op"], "grad_mode": fields["grad_mode"]}
    if session and session.share_line and fields["line"] and fields["status"] != "passed":
        data["line"] = anonymise_line(fields["line"])
    if session and session.share_feedback and fields["status"] != "passed":
        from ..feedback.text import feedback_text

        data["feedback"] = clean_feedback(feedback_text(result))
    return {k: v for k, v in data.items() if v is not None or k in ("error", "op", "grad_mode")}


def _send(data: dict) -> None:
    """Queues one report and prints in one line what became of it (sender.py words it, waiting at most WAIT s)."""
    global _sender
    session = _session
    assert session is not None  # called once joined
    if _sender is None:
        _sender = Sender()
    # --- issue 33 (the live branch): undelivered reports are kept and sent again; Sender.report says how it went
    line, hints = _sender.report(f"{session.url}/report", data, session.headers(), session.pseudonym, WAIT)
    print(line)
    _hints.extend(hints)
    # --- end of issue 33's lines
    while _hints:
        print(f"Workshop hint from the host: {_hints.pop(0)}")


def install(check: Any, before: list, after: list, stopped: list) -> None:
    """Gives the notebook's check() its workshop side (selfcheck.py's hooks): check.join, check.preview,
    check.leave, check.stuck, check.done, and a report after every check (only once joined)."""
    check.join, check.preview, check.leave, check.stuck, check.done = join, preview, leave, stuck, done
    for hooks, hook in ((before, before_check), (after, after_check), (stopped, after_stop)):
        if hook not in hooks:
            hooks.append(hook)


def before_check(exercise: str) -> None:
    """Called by check() before it runs: a marker, so that a kernel that dies in the check is reported."""
    try:
        session = _current()
        if session is not None and session.room:
            identity.checking(session.room, exercise)
    except Exception:  # noqa: BLE001, S110 - a report must never break a check
        pass


def after_check(result: Any, run_report: Any) -> None:
    """Called by check(): remembers the check for preview() and, if joined, sends its report."""
    global _last
    try:
        _last = (result, run_report)
        session = _current()
        if session is None:
            return
        identity.checked(session.room)
        data = payload(result, run_report, session)
        _send({**data, "secret": session.secret} if session.secret else data)
    except Exception:  # noqa: BLE001, S110 - a report must never break a check
        pass


def after_stop(exercise: str, stop: Any) -> None:
    """Called by check() when it was stopped with no verdict (Ctrl-C: nothing is sent; a time limit, which check()
    reports as a timed_out result through after_check, is sent here only where that did not happen)."""
    try:
        session = _current()
        if session is None:
            return
        identity.checked(session.room)
        if getattr(stop, "timed_out", False):
            _send(_empty(exercise, "timed_out"))
    except Exception:  # noqa: BLE001, S110 - a report must never break a check
        pass


def _note(kind: str, said: str) -> None:
    session = _current()
    if session is None:
        print("Not in a workshop: check.join(URL) first.")
        return
    data = {"v": VERSION, "pseudonym": session.pseudonym, "secret": session.secret, "kind": kind}
    done = post(f"{session.url}/event", {k: v for k, v in data.items() if v is not None}, session.headers())
    print(said if done.ok else f"Workshop: the note did not arrive ({done.why}). Raise your hand instead.")


def stuck() -> None:
    """Puts up a 'stuck' note on the helpers' view: someone will come by. A passing check or check.done() takes
    it down."""
    _note("stuck", "Workshop: your 'stuck' note is up; a helper will come by. check.done() takes it down.")


def done() -> None:
    """Says you have finished (and takes down a 'stuck' note)."""
    _note("done", "Workshop: marked as done. Thank you!")


def leave() -> None:
    """Stops reporting; this kernel's heartbeat stops, and the room shows you as gone."""
    global _session, _left, _heartbeat
    was = _session
    if was is not None and was.secret:
        post(f"{was.url}/event", {"v": VERSION, "pseudonym": was.pseudonym, "secret": was.secret, "kind": "left"}, {})
    if _heartbeat is not None:
        _heartbeat.stop()
        _heartbeat = None
    _session, _left = None, True
    print("Left the workshop: check() sends nothing from now on." if was else "Not in a workshop: nothing is sent.")


def last_report() -> dict | None:
    """What the last check sent (or would send once you join), as data; None before any check."""
    return None if _last is None else payload(*_last, _session)


def preview() -> None:
    """Prints exactly what the last check sent (or would send once you join)."""
    session = _current()
    if _last is None:
        print("No check has run yet: run check(\"<exercise>\") first, then check.preview().")
        return
    data = payload(*_last, session)
    where = f"to {session.url}/report" if session else "if you joined (check.join(URL)); nothing is sent now"
    print(f"The last check sends, {where}:")
    print(json.dumps(data, indent=2, ensure_ascii=False))
