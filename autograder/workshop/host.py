"""The host's side of the server: the dashboard page and its data, and what the host does from it.

- `GET  dashboard`, `static/NAME`: the page;
- `GET  api/state?view=projector|helper|controls&since=VERSION`: the room; with `since`, the answer waits
  (up to 25 s) until the room has changed since that version: the page asks again at once, so an attempt
  shows within about NOTIFY_EVERY seconds (a long poll: the token travels in a header, which EventSource
  cannot send);
- `POST api/spotlight` (a shared line, a misconception, or nothing), `api/hint`, `api/limits`, `api/start`
  (an exercise starts now): the host only.

Rights: a bearer token (the host's, from this machine only: a loopback address and no forwarding header;
or a helper's, read-only), or on a hub, membership of the hosts' group. Every POST also needs a header
that no cross-site form can send.
"""

from __future__ import annotations

import asyncio
import datetime
import hmac
import json
import re
import time
import unicodedata
from pathlib import Path
from typing import cast

from tornado import web
from tornado.http1connection import HTTP1Connection

from ..feedback.wording import say
from .net import LOOPBACK, TRUSTABLE
from .room import Base
from .views import state

STATIC = Path(__file__).resolve().parent / "static"
FORWARDING = TRUSTABLE + ("Forwarded",)
WAIT = 25.0
MAX_HINT = 300
MAX_PARTICIPANTS = 5000


class HostBase(Base):
    def is_local(self) -> bool:
        ip = self.request.remote_ip or ""
        return ip.startswith(LOOPBACK) and not any(h in self.request.headers for h in FORWARDING)

    def role(self) -> str:
        """'host', 'helper', or an HTTPError: a bearer token, or on a hub, the hosts' group."""
        if self.ws.hub is not None:
            if self.ws.hub.is_host(self):
                return "host"
            raise web.HTTPError(403, reason=say("workshop: not in the hosts' group"))
        given = self.request.headers.get("Authorization", "")
        token = given[7:].encode() if given.startswith("Bearer ") else b""
        if token and hmac.compare_digest(token, self.ws.config.host_token.encode()):
            if not self.is_local():
                raise web.HTTPError(403, reason=say("workshop: host token elsewhere"))
            return "host"
        if token and hmac.compare_digest(token, self.ws.config.helper_token.encode()):
            return "helper"
        raise web.HTTPError(401, reason=say("workshop: no token"))

    def host_post(self) -> dict:
        """The JSON body of a host's POST, after its rights and the anti-forgery header."""
        if self.role() != "host":
            raise web.HTTPError(403, reason=say("workshop: host only"))
        if self.request.headers.get("X-Workshop") != "1":  # a custom header: no cross-site form can send it
            raise web.HTTPError(400)
        try:
            data = json.loads(self.request.body)
        except ValueError:
            raise web.HTTPError(400) from None
        if not isinstance(data, dict):
            raise web.HTTPError(400)
        return data

    def done(self) -> None:
        self.ws.changed()
        self.set_status(204)
        self.finish()


class DashboardHandler(HostBase):
    def get(self) -> None:
        if self.ws.hub is not None:
            self.ws.hub.require_login(self)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish((STATIC / "dashboard.html").read_bytes())


class StaticHandler(HostBase):
    TYPES = {"dashboard.js": "text/javascript; charset=utf-8", "dashboard.css": "text/css; charset=utf-8",
             "favicon.svg": "image/svg+xml"}

    def get(self, name: str) -> None:
        if name not in self.TYPES:
            raise web.HTTPError(404, reason=say("workshop: no such page", prefix=self.ws.config.prefix))
        self.set_header("Content-Type", self.TYPES[name])
        self.finish((STATIC / name).read_bytes())


class StateHandler(HostBase):
    async def get(self) -> None:
        role = self.role()
        view = self.get_query_argument("view", "projector")
        if view not in ("projector", "helper", "controls") or (view == "controls" and role != "host"):
            raise web.HTTPError(403, reason=say("workshop: view refused"))
        ws = self.ws
        since = self.get_query_argument("since", "")
        deadline = time.monotonic() + WAIT
        while since.isdigit() and int(since) == ws.published and time.monotonic() < deadline:
            try:
                await ws.changes.wait(timeout=datetime.timedelta(seconds=deadline - time.monotonic()))
            except asyncio.CancelledError:
                return
        # a request this server is serving: its connection is tornado's HTTP/1 connection
        if cast(HTTP1Connection, self.request.connection).stream.closed():
            return
        self.set_header("Content-Type", "application/json")
        self.finish(self.render_state(view, role))

    def render_state(self, view: str, role: str) -> bytes:
        """The view's JSON, computed at most once per room version and second, whoever asks."""
        ws, now = self.ws, time.time()
        cached = ws.cache.get(view)
        if cached and cached[0] == (ws.version, ws.published) and now - cached[1] < 1.0:
            data = cached[2]
        else:
            data = json.dumps(state(ws.store, ws.config.course, now, ws.config.thresholds, view, ws.room())).encode()
            ws.cache[view] = ((ws.version, ws.published), now, data)
        return data[:-1] + f', "role": "{role}"}}'.encode()


class SpotlightHandler(HostBase):
    def post(self) -> None:
        data = self.host_post()
        ws = self.ws
        line_id, misconception = data.get("id"), data.get("misconception")
        if line_id is None and misconception is None:
            ws.spotlight = None
        elif isinstance(misconception, str) and misconception in ws.config.course.by_id:
            known = ws.config.course.by_id[misconception]
            ws.spotlight = {"kind": "misconception", **known.to_json()}
        else:
            found = (ws.store.line(line_id) if isinstance(line_id, str) and re.fullmatch(r"[0-9a-f]{16}", line_id)
                     else None)
            if found is None:
                raise web.HTTPError(404, reason=say("workshop: no such line"))
            exercise, op, line = found
            ws.spotlight = {"kind": "line", "exercise": exercise, "op": op, "line": line}
        ws.save()
        self.done()


class StartHandler(HostBase):
    """The host starts an exercise now: minutes to pass are measured from here (or from a participant's join,
    if later)."""

    def post(self) -> None:
        exercise = self.host_post().get("exercise")
        if exercise not in self.ws.config.course.exercises:
            raise web.HTTPError(400, reason=say("workshop: hint exercise unknown"))
        self.ws.starts[exercise] = time.time()
        self.ws.save()
        self.done()


class HintHandler(HostBase):
    def post(self) -> None:
        data = self.host_post()
        text, exercise = data.get("text"), data.get("exercise")
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_HINT or any(
                unicodedata.category(ch).startswith("C") for ch in text):
            raise web.HTTPError(400, reason=say("workshop: hint too long", limit=MAX_HINT))
        if exercise is not None and exercise not in self.ws.config.course.exercises:
            raise web.HTTPError(400, reason=say("workshop: hint exercise unknown"))
        self.ws.store.add_hint(exercise, " ".join(text.split()), time.time())
        self.done()


class LimitsHandler(HostBase):
    def post(self) -> None:
        data = self.host_post()
        cap = data.get("max_participants")
        if not isinstance(cap, int) or isinstance(cap, bool) or not 1 <= cap <= MAX_PARTICIPANTS:
            raise web.HTTPError(400, reason=say("workshop: max participants", low=1, high=MAX_PARTICIPANTS))
        self.ws.max_participants = cap
        self.ws.store.set_meta({"max_participants": str(cap)})
        self.done()


def routes(p: str, kw: dict, host) -> list:
    return [
        (rf"{p}dashboard", host(DashboardHandler), kw),
        (rf"{p}static/([a-z.]+)", StaticHandler, kw),
        (rf"{p}api/state", host(StateHandler), kw),
        (rf"{p}api/spotlight", host(SpotlightHandler), kw),
        (rf"{p}api/hint", host(HintHandler), kw),
        (rf"{p}api/limits", host(LimitsHandler), kw),
        (rf"{p}api/start", host(StartHandler), kw),
    ]

