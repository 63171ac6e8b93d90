"""The participant's side: `check.join(URL)`, `check.preview()`, `check.stuck()`, `check.done()`,
`check.leave()`, and what every `check()` then sends. The notebook's check (`from autograder import check`,
autograder/notebook/learner.py) is the self-check (selfcheck.Checker) built with this client's LISTENER, which lends it
those commands.
Opt-in only, its network side standard library only; it never raises into check(), and a check waits at most
WAIT seconds for its report's answer (not at all while the server is known to be down), then says in one line
whether the report arrived.

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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..feedback.wording import say
from . import identity
from .attempt_fields import attempt_fields
from .course import load as load_course
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
        raise ValueError(say("notebook: workshop bad url", url=url))
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
            raise JoinError(say("notebook: workshop no such code", code=code, where=_where(base))) from None
        raise JoinError(say("notebook: workshop refused", where=_where(base), status=e.code)) from None
    except (urllib.error.URLError, OSError) as e:
        raise JoinError(say("notebook: workshop unreachable", where=_where(base),
                            reason=getattr(e, "reason", e))) from None
    except ValueError:
        raise JoinError(say("notebook: workshop not a server", where=_where(base))) from None
    if not isinstance(info, dict) or info.get("workshop") is not True or not isinstance(info.get("room"), str):
        raise JoinError(say("notebook: workshop not a server", where=_where(base)))
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
        raise ValueError(say("notebook: workshop bad seat", most=MAX_SEAT))
    room = _verify(base)
    kept = identity.load(room)
    request = {"v": VERSION, "seat": seat.strip()}
    delivery = post(base + "/join", {**request, "pseudonym": kept[0], "secret": kept[1]} if kept else request, {}, 5)
    if not delivery.ok and kept and delivery.why.startswith("HTTP 403"):
        identity.forget(room)  # not this room's any more: join as someone new
        kept, delivery = None, post(base + "/join", request, {}, 5)
    if not delivery.ok:
        raise JoinError(say("notebook: workshop join failed", where=_where(base), why=delivery.why))
    name, secret = delivery.answer.get("pseudonym"), delivery.answer.get("secret") or (kept[1] if kept else None)
    if not isinstance(name, str) or not isinstance(secret, str):
        raise JoinError(say("notebook: workshop odd join", where=_where(base)))
    identity.keep(room, name, secret)
    _session, _left = Session(base, name, secret, room, bool(share_line), bool(share_feedback)), False
    print(say("notebook: workshop joined", where=_where(base), pseudonym=name,
              seat=say("notebook: workshop seat", seat=seat.strip()) if seat.strip() else "",
              again=say("notebook: workshop same participant") if kept else "."))
    print(say("notebook: workshop what is sent",
              line=say("notebook: workshop sends line") if share_line else "",
              feedback=say("notebook: workshop sends feedback") if share_feedback else ""))
    for exercise in identity.died(room):
        _send({**_empty(exercise, "crashed")})
        print(say("notebook: workshop kernel died", exercise=exercise))
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
            print(say("notebook: workshop reporting", url=_session.url))
            if _heartbeat is None:
                _heartbeat = Heartbeat(_beat)
        else:
            try:
                join(os.environ[ENV])
            except (JoinError, ValueError) as e:
                _left = True
                print(say("notebook: workshop not reporting", why=e))
    return _session


def payload(result: Any, run_report: Any, session: Session | None) -> dict:
    """The report for one check, exactly as it is sent."""
    fields = attempt_fields(result, run_report)
    data = {"v": VERSION, "pseudonym": session.pseudonym if session else "(given-when-you-join-00)",
            "secret": "(kept on this machine)" if session and session.secret else None,
            "exercise": result.exercise, "status": fields["status"],
            "checks": [{"name": n, "passed": p} for n, p in fields["checks"]],
            "error": fields["error"], "op": fields["op"], "grad_mode": fields["grad_mode"],
            "changed": load_course().changed(result.exercise, fields["line"])}  # a yes or no: the line stays here
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
        print(say("notebook: workshop hint", hint=_hints.pop(0)))


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
        print(say("notebook: workshop not joined"))
        return
    data = {"v": VERSION, "pseudonym": session.pseudonym, "secret": session.secret, "kind": kind}
    done = post(f"{session.url}/event", {k: v for k, v in data.items() if v is not None}, session.headers())
    print(said if done.ok else say("notebook: workshop note lost", why=done.why))


def stuck() -> None:
    """Puts up a 'stuck' note on the helpers' view: someone will come by. A passing check or check.done() takes
    it down."""
    _note("stuck", say("notebook: workshop stuck"))


def done() -> None:
    """Says you have finished (and takes down a 'stuck' note)."""
    _note("done", say("notebook: workshop done"))


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
    print(say("notebook: workshop left") if was else say("notebook: workshop nothing sent"))


def last_report() -> dict | None:
    """What the last check sent (or would send once you join), as data; None before any check."""
    return None if _last is None else payload(*_last, _session)


def preview() -> None:
    """Prints exactly what the last check sent (or would send once you join)."""
    session = _current()
    if _last is None:
        print(say("notebook: workshop no check yet"))
        return
    data = payload(*_last, session)
    where = f"to {session.url}/report" if session else say("notebook: workshop if joined")
    print(say("notebook: workshop last sends", where=where))
    print(json.dumps(data, indent=2, ensure_ascii=False))


class WorkshopListener:
    """This client as a check()'s listener (selfcheck.Listener, by its shape: this module imports no checker): it
    hears of every check, and lends the checker its commands."""

    commands: Mapping[str, Callable[..., Any]] = {"join": join, "preview": preview, "leave": leave, "stuck": stuck,
                                                  "done": done}

    def before(self, exercise_id: str) -> None:
        before_check(exercise_id)

    def after(self, result: Any, report: Any) -> None:
        after_check(result, report)

    def stopped(self, exercise_id: str, stop: Any) -> None:
        after_stop(exercise_id, stop)


LISTENER = WorkshopListener()
"""What the notebook's check() (autograder/notebook/learner.py) is built with: this module stays free of torch, for the
server side, and never touches the checker itself."""
