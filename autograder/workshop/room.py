"""The room the server keeps: its configuration (`Config`), its state (`Workshop`), the handlers' common base
(`Base`) and the pages' content security policy (`CSP`). Both sides of the server build on it: the
participants' (server.py) and the host's (host.py); server.py assembles the application from both.
"""

from __future__ import annotations

import hmac
import json
import logging
import time
from dataclasses import dataclass, field

from tornado import locks, web
from tornado.ioloop import IOLoop

from ..feedback.wording import say
from .course import Course
from .limits import Buckets, Rate
from .net import CappedServer, client_key
from .storage import Store, Thresholds

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
    fold_join_s: float = 120.0  # the join panel folds once someone has joined and nobody for this long
    trusted: str | None = None  # the one forwarding header the proxy in front sets (--trust-forwarded)
    join_urls: tuple[str, ...] = ()
    helper_urls: tuple[str, ...] = ()
    qr: tuple[str, ...] = ()  # the first join URL's QR code, rows of 0 and 1


class Workshop:
    """The server's state: the store, the limits, a hub if any, and the room's version, which dashboards wait
    on. What the host projects (the spotlight), when they started each exercise, and the refusal counts are
    kept in the store's meta too, so that a restart keeps them like the rest of the room."""

    def __init__(self, config: Config, store: Store, hub=None):
        self.config, self.store, self.hub = config, store, hub
        self.addresses = Buckets(config.address_rate)
        self.joins = Buckets(config.join_rate)
        self.pseudonyms = Buckets(config.participant_rate)
        self.max_participants = config.max_participants
        kept = store.meta()
        self.spotlight: dict | None = _loads(kept.get("spotlight"), None)
        self.starts: dict[str, float] = _loads(kept.get("starts"), {})
        self.accepted = 0
        self.refused = {"invalid": 0, "rate": 0, "full": 0, "secret": 0}
        self.refused.update({k: v for k, v in _loads(kept.get("refused"), {}).items()
                             if k in self.refused and isinstance(v, int)})
        self._save_at: float | None = None
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

    def save(self) -> None:
        """Keeps the spotlight, the exercises' starts and the refusal counts in the state file."""
        self._save_at = None
        self.store.set_meta({"spotlight": json.dumps(self.spotlight), "starts": json.dumps(self.starts),
                             "refused": json.dumps(self.refused)})

    def count_refusal(self, kind: str) -> None:
        """One more refusal, kept within a second (a flood costs one write a second, not one a request)."""
        self.refused[kind] += 1
        if self._save_at is None:
            self._save_at = time.monotonic()
            IOLoop.current().call_later(1.0, self.save)

    def _notify(self) -> None:
        self._notify_at = None
        self.published = self.version
        self.changes.notify_all()

    def _joined(self) -> bool:
        """Whether the room has joined: someone has, and nobody for `fold_join_s`. The projector then folds its
        join panel to one line (the line to type, still readable)."""
        last = max((t for pid in self.store.people() for t in self.store.joins(pid)), default=None)
        return last is not None and time.time() - last >= self.config.fold_join_s

    def room(self) -> dict:
        """What the views add to the store's data."""
        c = self.config
        return {"version": self.published, "room": c.room, "spotlight": self.spotlight, "starts": self.starts,
                "join": None if self.hub is not None else {"code": c.code, "urls": list(c.join_urls), "qr": list(c.qr),
                                                           "folded": self._joined()},
                "helpers": list(c.helper_urls),
                "limits": {"max_participants": self.max_participants, "refused": dict(self.refused),
                           "connections_refused": getattr(self.connections, "refused_connections", 0)}}


def _loads(text: str | None, default):
    try:
        found = json.loads(text) if text else default
    except ValueError:
        return default
    return found if isinstance(found, type(default)) or (default is None and isinstance(found, dict)) else default


class Base(web.RequestHandler):
    """Every answer of the server, its errors and unknown paths included: no Server banner, JSON errors with
    their real reason."""

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
            self.ws.count_refusal("rate")
            raise web.HTTPError(429, reason=say("workshop: too many requests"))

    def write_error(self, status_code: int, **kwargs) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": self._reason}))

    def log_exception(self, typ, value, tb) -> None:  # the default names the client's address
        if not isinstance(value, web.HTTPError):
            logging.getLogger("autograder.workshop").error("internal error in %s", type(self).__name__,
                                                           exc_info=(typ, value, tb))

    def check_code(self, code: str | None) -> None:
        """A wrong code is a 404 in words; a code typed in lowercase is the same code."""
        if self.ws.hub is None and not hmac.compare_digest((code or "").upper().encode(), self.ws.config.code.encode()):
            raise web.HTTPError(404, reason=say("workshop: no such code"))

    def json_body(self) -> bytes:
        if not self.request.headers.get("Content-Type", "").startswith("application/json"):
            raise web.HTTPError(415)
        return self.request.body

    def refuse(self, why: str, status: int, kind: str = "invalid"):
        self.ws.count_refusal(kind)
        return web.HTTPError(status, reason=why)


class NotFound(Base):
    """Any path the server does not serve (tornado's default would name itself in a Server header)."""

    def prepare(self) -> None:
        super().prepare()
        raise web.HTTPError(404, reason=say("workshop: no such page", prefix=self.ws.config.prefix))
