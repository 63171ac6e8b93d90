"""The workshop server: one Tornado application; participants' side here, the host's in host.py.

Routes, under `prefix` ("/", or the hub's service prefix):
- `GET  CODE`         a participant's join URL: says it is this workshop (404 for a wrong code);
- `POST CODE/join`    a new participant gets a pseudonym and a secret; one coming back (a new kernel, another
                      notebook) sends theirs and stays who they were;
- `POST CODE/report`  one check's report, with the secret; answered with the host's hints not yet given;
- `POST CODE/event`   a heartbeat ("seen"), a sticky note ("stuck", "done"), or "left";
- on a hub: `report` and `event`, with the hub's token instead of code and secret;
- the dashboard and its data: host.py.

Client addresses are used for rate limiting in memory and are never logged (tornado's own log lines that
would name one are silenced) nor stored.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import time
from dataclasses import dataclass, field, replace

from tornado import locks, web
from tornado.ioloop import IOLoop

from .course import Course
from .limits import Buckets, Rate
from .net import CappedServer, client_key
from .schema import SchemaError, parse, parse_event, parse_join
from .storage import RoomRefused, Store, Thresholds

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
NOTIFY_EVERY = 0.2
"""Seconds between two wake-ups of the dashboards waiting for a change: a busy room costs at most five
states a second, whoever is watching."""


@dataclass
class Config:
    code: str
    host_token: str
    helper_token: str
    course: Course
    room: str = "room"
    thresholds: Thresholds = field(default_factory=Thresholds)
    max_participants: int = 250
    participant_rate: Rate = Rate(per_second=0.5, burst=10)
    address_rate: Rate = Rate(per_second=50, burst=200)
    join_rate: Rate = Rate(per_second=2, burst=60)
    prefix: str = "/"
    trusted: str | None = None  # the one forwarding header the proxy in front sets (--trust-forwarded)
    join_urls: tuple[str, ...] = ()
    helper_urls: tuple[str, ...] = ()
    qr: tuple[str, ...] = ()  # the first join URL's QR code, rows of 0 and 1


class Workshop:
    """The server's state: the store, the limits, the spotlight (in memory), a hub if any, and the room's
    version, which dashboards wait on."""

    def __init__(self, config: Config, store: Store, hub=None):
        self.config, self.store, self.hub = config, store, hub
        self.addresses = Buckets(config.address_rate)
        self.joins = Buckets(config.join_rate)
        self.pseudonyms = Buckets(config.participant_rate)
        self.max_participants = config.max_participants
        self.spotlight: dict | None = None
        self.accepted = 0
        self.refused = {"invalid": 0, "rate": 0, "full": 0, "secret": 0}
        self.version = 0  # counts changes
        self.published = 0  # the version dashboards were last woken for: each gets at most one answer per wake-up
        self.changes = locks.Condition()
        self._notify_at: float | None = None
        self.connections: CappedServer | None = None  # the CappedServer, for its counts
        self.cache: dict[str, tuple[tuple[int, int], float, bytes]] = {}  # view -> (versions, when, the JSON)

    def changed(self) -> None:
        """The room changed: wake the waiting dashboards, at most every NOTIFY_EVERY seconds."""
        self.version += 1
        if self._notify_at is None:
            self._notify_at = time.monotonic() + NOTIFY_EVERY
            IOLoop.current().call_later(NOTIFY_EVERY, self._notify)

    def _notify(self) -> None:
        self._notify_at = None
        self.published = self.version
        self.changes.notify_all()

    def room(self) -> dict:
        """What the views add to the store's data."""
        c = self.config
        return {"version": self.published, "room": c.room, "spotlight": self.spotlight,
                "join": None if self.hub is not None else {"code": c.code, "urls": list(c.join_urls), "qr": list(c.qr)},
                "helpers": list(c.helper_urls),
                "limits": {"max_participants": self.max_participants, "refused": dict(self.refused),
                           "connections_refused": getattr(self.connections, "refused_connections", 0)}}


class Base(web.RequestHandler):
    def initialize(self, workshop: Workshop) -> None:
        self.ws = workshop

    def set_default_headers(self) -> None:
        self.clear_header("Server")
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Referrer-Policy", "no-referrer")
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("Cache-Control", "no-store")

    def client(self) -> str:
        return client_key(self.request.remote_ip, self.request.headers, self.ws.config.trusted)

    def prepare(self) -> None:
        if not self.ws.addresses.allow(self.client()):
            self.ws.refused["rate"] += 1
            raise web.HTTPError(429, reason="too many requests")

    def write_error(self, status_code: int, **kwargs) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": self._reason}))

    def log_exception(self, typ, value, tb) -> None:  # the default names the client's address
        if not isinstance(value, web.HTTPError):
            logging.getLogger("autograder.workshop").error("internal error in %s", type(self).__name__,
                                                           exc_info=(typ, value, tb))

    def check_code(self, code: str | None) -> None:
        if self.ws.hub is None and not hmac.compare_digest((code or "").encode(), self.ws.config.code.encode()):
            raise web.HTTPError(404, reason="no workshop with this code here: check the code on the projector")

    def json_body(self) -> bytes:
        if not self.request.headers.get("Content-Type", "").startswith("application/json"):
            raise web.HTTPError(415)
        return self.request.body

    def refuse(self, why: str, status: int, kind: str = "invalid"):
        self.ws.refused[kind] += 1
        return web.HTTPError(status, reason=why)


class JoinInfoHandler(Base):
    def get(self, code: str) -> None:
        self.check_code(code)
        c = self.ws.config
        self.finish({"workshop": True, "room": c.room, "exercises": list(c.course.exercises)})


class JoinHandler(Base):
    def post(self, code: str) -> None:
        self.check_code(code)
        ws = self.ws
        if not ws.joins.allow(self.client()):
            raise self.refuse("too many joins from this address; try again in a minute", 429, "rate")
        try:
            join = parse_join(self.json_body())
        except SchemaError as e:
            raise self.refuse(f"invalid join: {e}", 400) from None
        try:
            name, secret = ws.store.join(join.seat, join.pseudonym, join.secret, time.time(), ws.max_participants,
                                         ws.config.thresholds.gone_minutes)
        except RoomRefused as e:
            raise self.refuse(str(e), e.status, "full" if e.status == 503 else "secret") from None
        ws.changed()
        heartbeat = max(5.0, min(60.0, ws.config.thresholds.gone_minutes * 60 / 3))
        self.finish({"pseudonym": name, "secret": secret, "room": ws.config.room, "heartbeat_s": heartbeat,
                     "exercises": list(ws.config.course.exercises)})


class ParticipantHandler(Base):
    async def who(self, pseudonym: str, secret: str | None) -> int:
        """The participant's id: by secret, or on a hub, by the hub's token."""
        ws = self.ws
        if ws.hub is not None:
            name = await ws.hub.participant(self)
            return ws.store.hub_participant(ws.hub.pseudonym(name), name[:40], time.time())
        try:
            return ws.store.participant(pseudonym, secret)
        except RoomRefused as e:
            raise self.refuse(str(e), e.status, "secret") from None


class ReportHandler(ParticipantHandler):
    async def post(self, code: str | None = None) -> None:
        self.check_code(code)
        ws, course = self.ws, self.ws.config.course
        body = self.json_body()
        try:
            report = parse(body, course.exercises, course.checks)
        except SchemaError as e:
            raise self.refuse(f"invalid report: {e}", 400) from None
        pid = await self.who(report.pseudonym, report.secret)
        if not ws.pseudonyms.allow(str(pid)):
            raise self.refuse("too many reports: at most one every two seconds", 429, "rate")
        op, error = course.op(report.op), course.error(report.error)
        # only a run that finished and failed is a known wrong answer: a timeout or a crash says nothing of the
        # answer's ideas (its checks all fail with no error, as the starter's do)
        found = course.match(report.exercise, report.failing, error, op, report.grad_mode) \
            if report.status == "failed" else None
        now = time.time()
        ws.store.record(pid, replace(report, op=op, error=error), now, found.id if found else None)
        ws.accepted += 1
        ws.changed()
        self.finish({"received": True, "hints": ws.store.deliver(pid, report.exercise)})


class EventHandler(ParticipantHandler):
    async def post(self, code: str | None = None) -> None:
        self.check_code(code)
        try:
            event = parse_event(self.json_body())
        except SchemaError as e:
            raise self.refuse(f"invalid event: {e}", 400) from None
        pid = await self.who(event.pseudonym, event.secret)
        if event.kind != "seen" and not self.ws.pseudonyms.allow(str(pid)):
            raise self.refuse("too many notes: wait a little", 429, "rate")
        store, now = self.ws.store, time.time()
        if event.kind == "left":
            store.left(pid)
        else:
            store.seen(pid, now, None if event.kind == "seen" else event.kind)
        if event.kind != "seen":
            self.ws.changed()
        self.finish({"received": True, "hints": store.deliver(pid, None) if event.kind == "seen" else []})


def make_app(workshop: Workshop) -> web.Application:
    from . import host

    p = re.escape(workshop.config.prefix)
    kw = {"workshop": workshop}
    hub = workshop.hub
    routes = host.routes(p, kw, hub.wrap if hub is not None else (lambda handler: handler))
    if hub is not None:
        routes += [(rf"{p}report", ReportHandler, kw), (rf"{p}event", EventHandler, kw)] + hub.routes(p)
    else:
        code = r"([A-Z0-9]{4,12})"
        routes += [(rf"{p}{code}/?", JoinInfoHandler, kw), (rf"{p}{code}/join", JoinHandler, kw),
                   (rf"{p}{code}/report", ReportHandler, kw), (rf"{p}{code}/event", EventHandler, kw)]
    return web.Application(routes, log_function=lambda handler: None, serve_traceback=False,
                           cookie_secret=hub.cookie_secret if hub is not None else None)


ADDRESS = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}")


class _NoAddresses(logging.Filter):
    """Tornado's own log lines can name a client's address ('Malformed HTTP message from ...'): the
    informational ones are dropped, and addresses are blotted out of errors."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return False
        record.msg, record.args = ADDRESS.sub("[address]", record.getMessage()), None
        return True


def quiet_tornado() -> None:
    for name in ("tornado.access", "tornado.general", "tornado.application"):
        logging.getLogger(name).addFilter(_NoAddresses())
    logging.getLogger("tornado.access").disabled = True
