"""The workshop server: one Tornado application, reports in, dashboard out.

Routes, under `prefix` ("/", or the hub's service prefix):
- `GET  CODE`            a participant's join URL: says it is a workshop (and checks the code);
- `POST CODE/report`     one report (schema.py), answered 204; on a hub, `report` with the hub's token;
- `GET  dashboard`       the static dashboard page; its data comes from
- `GET  api/state?view=projector|helper|controls` and `POST api/spotlight`, with the host's or a helper's
  token (`Authorization: Bearer ...`), or on a hub, a member of the hosts' group.

The host token works only from this machine (a loopback address, no forwarding header): it never has to
leave it. Client addresses are used for rate limiting in memory and are never logged (tornado's own log
lines that would name one are silenced) nor stored.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from tornado import httpserver, netutil, web

from .limits import Buckets, Rate
from .schema import MAX_BODY, SchemaError, parse
from .storage import Store, Thresholds
from .views import state

STATIC = Path(__file__).resolve().parent / "static"
LOOPBACK = ("127.", "::1", "::ffff:127.")
FORWARDING = ("X-Forwarded-For", "X-Real-Ip", "Forwarded", "Cf-Connecting-Ip")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


@dataclass
class Config:
    code: str
    host_token: str
    helper_token: str
    exercises: tuple[str, ...]
    thresholds: Thresholds = field(default_factory=Thresholds)
    max_participants: int = 250
    participant_rate: Rate = Rate(per_second=0.5, burst=10)
    address_rate: Rate = Rate(per_second=50, burst=200)
    prefix: str = "/"


class Workshop:
    """The server's state: the store, the limits, the spotlight (in memory only), and a hub, if any."""

    def __init__(self, config: Config, store: Store, hub=None):
        self.config, self.store, self.hub = config, store, hub
        self.addresses = Buckets(config.address_rate)
        self.pseudonyms = Buckets(config.participant_rate)
        self.spotlight: dict | None = None
        self.accepted = self.refused = 0


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

    def prepare(self) -> None:
        if not self.ws.addresses.allow(self.request.remote_ip or "?"):
            self.ws.refused += 1
            raise web.HTTPError(429)

    def write_error(self, status_code: int, **kwargs) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": self._reason}))

    def log_exception(self, typ, value, tb) -> None:  # the default names the client's address
        if not isinstance(value, web.HTTPError):
            logging.getLogger("autograder.workshop").error("internal error in %s", type(self).__name__,
                                                           exc_info=(typ, value, tb))

    def check_code(self, code: str) -> None:
        if not hmac.compare_digest(code.encode(), self.ws.config.code.encode()):
            raise web.HTTPError(404)

    # --- the dashboard's rights -------------------------------------------------------------------------
    def is_local(self) -> bool:
        ip = self.request.remote_ip or ""
        return ip.startswith(LOOPBACK) and not any(h in self.request.headers for h in FORWARDING)

    def role(self) -> str:
        """'host', 'helper', or an HTTPError: a bearer token, or on a hub, the hosts' group."""
        if self.ws.hub is not None:
            if self.ws.hub.is_host(self):
                return "host"
            raise web.HTTPError(403)
        given = self.request.headers.get("Authorization", "")
        token = given[7:].encode() if given.startswith("Bearer ") else b""
        if token and hmac.compare_digest(token, self.ws.config.host_token.encode()):
            if not self.is_local():
                raise web.HTTPError(403, reason="the host token works only on the host's machine")
            return "host"
        if token and hmac.compare_digest(token, self.ws.config.helper_token.encode()):
            return "helper"
        raise web.HTTPError(401)


class JoinHandler(Base):
    def get(self, code: str) -> None:
        self.check_code(code)
        self.finish({"workshop": True, "join": f'check.join("{self.request.full_url().rstrip("/")}")'})


class ReportHandler(Base):
    async def post(self, code: str | None = None) -> None:
        ws = self.ws
        if ws.hub is None:
            self.check_code(code or "")
        if not self.request.headers.get("Content-Type", "").startswith("application/json"):
            raise web.HTTPError(415)
        name = await ws.hub.participant(self) if ws.hub is not None else None
        try:
            report = parse(self.request.body, ws.config.exercises)
        except SchemaError as e:
            ws.refused += 1
            raise web.HTTPError(400, reason=f"invalid report: {e}") from None
        if name is not None:
            report = ws.hub.identify(report, name)
        if not ws.pseudonyms.allow(report.pseudonym):
            ws.refused += 1
            raise web.HTTPError(429)
        if ws.store.participant(report.pseudonym) is None and ws.store.participants() >= ws.config.max_participants:
            ws.refused += 1
            raise web.HTTPError(403, reason="the workshop is full")
        ws.store.record(report, time.time())
        ws.accepted += 1
        self.set_status(204)
        self.finish()


class DashboardHandler(Base):
    def get(self) -> None:
        if self.ws.hub is not None:
            self.ws.hub.require_login(self)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish((STATIC / "dashboard.html").read_bytes())


class StaticHandler(Base):
    TYPES = {"dashboard.js": "text/javascript; charset=utf-8", "dashboard.css": "text/css; charset=utf-8",
             "favicon.svg": "image/svg+xml"}

    def get(self, name: str) -> None:
        if name not in self.TYPES:
            raise web.HTTPError(404)
        self.set_header("Content-Type", self.TYPES[name])
        self.finish((STATIC / name).read_bytes())


class StateHandler(Base):
    def get(self) -> None:
        role = self.role()
        view = self.get_query_argument("view", "projector")
        if view not in ("projector", "helper", "controls") or (view == "controls" and role != "host"):
            raise web.HTTPError(403)
        ws = self.ws
        data = state(ws.store, ws.config.exercises, time.time(), ws.config.thresholds, view, ws.spotlight)
        data["role"] = role
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(data))


class SpotlightHandler(Base):
    def post(self) -> None:
        if self.role() != "host":
            raise web.HTTPError(403)
        if self.request.headers.get("X-Workshop") != "1":  # a custom header: no cross-site form can send it
            raise web.HTTPError(400)
        try:
            line_id = json.loads(self.request.body)["id"]
        except (ValueError, KeyError, TypeError):
            raise web.HTTPError(400) from None
        if line_id is None:
            self.ws.spotlight = None
        else:
            found = self.ws.store.line(line_id) if isinstance(line_id, str) and re.fullmatch(r"[0-9a-f]{16}", line_id) else None
            if found is None:
                raise web.HTTPError(404)
            exercise, op, line = found
            self.ws.spotlight = {"exercise": exercise, "op": op, "line": line}
        self.set_status(204)
        self.finish()


def make_app(workshop: Workshop) -> web.Application:
    p = re.escape(workshop.config.prefix)
    kw = {"workshop": workshop}
    hub = workshop.hub
    host = hub.wrap if hub is not None else (lambda handler: handler)
    routes = [
        (rf"{p}dashboard", host(DashboardHandler), kw),
        (rf"{p}static/([a-z.]+)", StaticHandler, kw),
        (rf"{p}api/state", host(StateHandler), kw),
        (rf"{p}api/spotlight", host(SpotlightHandler), kw),
    ]
    if workshop.hub is not None:
        routes += [(rf"{p}report", ReportHandler, kw)] + workshop.hub.routes(p)
    else:
        routes += [(rf"{p}([A-Z0-9]{{4,12}})/?", JoinHandler, kw), (rf"{p}([A-Z0-9]{{4,12}})/report", ReportHandler, kw)]
    return web.Application(routes, log_function=lambda handler: None, serve_traceback=False,
                           cookie_secret=workshop.hub.cookie_secret if workshop.hub is not None else None)


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


def listen(app: web.Application, host: str, port: int, xheaders: bool = False) -> tuple[httpserver.HTTPServer, int]:
    """Binds the server (port 0: any free port) and returns it with its port."""
    server = httpserver.HTTPServer(app, xheaders=xheaders, max_body_size=2 * MAX_BODY, max_header_size=16 * 1024,
                                   idle_connection_timeout=30, body_timeout=10)
    sockets = netutil.bind_sockets(port, host)
    server.add_sockets(sockets)
    return server, sockets[0].getsockname()[1]
