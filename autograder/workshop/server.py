"""The workshop server: one Tornado application; participants' side here, the host's in host.py, the room
both build on (its Config, state and handlers' Base) in room.py.

Routes, under `prefix` ("/", or the hub's service prefix):
- `GET  CODE`         a participant's join URL: says it is this workshop (404 for a wrong code);
- `POST CODE/join`    a new participant gets a pseudonym and a secret; one coming back (a new kernel, another
                      notebook) sends theirs and stays who they were;
- `POST CODE/report`  one check's attempt (the route keeps its first name), with the secret; answered with
                      the host's hints not yet given;
- `POST CODE/event`   a heartbeat ("seen"), a sticky note ("stuck", "done"), or "left";
- on a hub: `report` (an attempt) and `event`, with the hub's token instead of code and secret;
- the dashboard and its data: host.py.

Client addresses are used for rate limiting in memory and are never logged (tornado's own log lines that
would name one are silenced) nor stored.
"""

from __future__ import annotations

import html
import logging
import re
import time
from dataclasses import replace

from tornado import web

from ..feedback.wording import say
from . import host
from .room import Base, NotFound, Workshop
from .schema import SchemaError, parse, parse_event, parse_join
from .storage import RoomRefused


class JoinInfoHandler(Base):
    def get(self, code: str) -> None:
        """JSON for the client's check.join; for a browser (a phone that scanned the QR code), a page that
        shows the line to type in the notebook."""
        self.check_code(code)
        c = self.ws.config
        if "text/html" in self.request.headers.get("Accept", ""):
            url = c.join_urls[0] if c.join_urls else f"{self.request.protocol}://{self.request.host}/{c.code}"
            line = f'check.join("{url}", seat="")'
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.finish(JOIN_PAGE.format(title=html.escape(say("workshop: join page title", code=c.code)),
                                         intro=html.escape(say("workshop: join page intro")),
                                         line=html.escape(line), seat=html.escape(say("workshop: join page seat"))))
            return
        self.finish({"workshop": True, "room": c.room, "exercises": list(c.course.exercises)})


JOIN_PAGE = ('<!doctype html><html lang="en"><head><meta charset="utf-8">'
             '<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title></head>'
             '<body><h1>{title}</h1><p>{intro}</p><pre>{line}</pre><p>{seat}</p></body></html>')


class JoinHandler(Base):
    def post(self, code: str) -> None:
        self.check_code(code)
        ws = self.ws
        if not ws.joins.allow(self.client()):
            raise self.refuse(say("workshop: too many joins"), 429, "rate")
        try:
            join = parse_join(self.json_body())
        except SchemaError as e:
            raise self.refuse(say("workshop: invalid join", why=e), 400) from None
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


class AttemptHandler(ParticipantHandler):
    async def post(self, code: str | None = None) -> None:
        self.check_code(code)
        ws, course = self.ws, self.ws.config.course
        body = self.json_body()
        try:
            attempt = parse(body, course.exercises, course.checks)
        except SchemaError as e:
            raise self.refuse(say("workshop: invalid attempt", why=e), 400) from None
        pid = await self.who(attempt.pseudonym, attempt.secret)
        if not ws.pseudonyms.allow(str(pid)):
            raise self.refuse(say("workshop: too many attempts"), 429, "rate")
        op, error = course.op(attempt.op), course.error(attempt.error)
        # only a run that finished and failed is a known wrong answer: a timeout or a crash says nothing of the
        # answer's ideas (its checks all fail with no error, as the starter's do)
        found = course.match(attempt.exercise, attempt.failing, error, op, attempt.grad_mode, attempt.changed) \
            if attempt.status == "failed" else None
        now = time.time()
        counted = ws.store.record(pid, replace(attempt, op=op, error=error), now, found.id if found else None)
        if counted:  # else an id already counted: a report sent again because its answer was lost
            ws.accepted += 1
            ws.changed()
        self.finish({"received": True, "counted": counted, "hints": ws.store.deliver(pid, attempt.exercise)})


class EventHandler(ParticipantHandler):
    async def post(self, code: str | None = None) -> None:
        self.check_code(code)
        try:
            event = parse_event(self.json_body())
        except SchemaError as e:
            raise self.refuse(say("workshop: invalid event", why=e), 400) from None
        pid = await self.who(event.pseudonym, event.secret)
        if event.kind != "seen" and not self.ws.pseudonyms.allow(str(pid)):
            raise self.refuse(say("workshop: too many notes"), 429, "rate")
        store, now = self.ws.store, time.time()
        if event.kind == "left":
            store.left(pid)
        else:
            store.seen(pid, now, None if event.kind == "seen" else event.kind)
        if event.kind != "seen":
            self.ws.changed()
        self.finish({"received": True, "hints": store.deliver(pid, None) if event.kind == "seen" else []})


def make_app(workshop: Workshop) -> web.Application:
    p = re.escape(workshop.config.prefix)
    kw = {"workshop": workshop}
    hub = workshop.hub
    routes = host.routes(p, kw, hub.wrap if hub is not None else (lambda handler: handler))
    if hub is not None:
        routes += [(rf"{p}report", AttemptHandler, kw), (rf"{p}event", EventHandler, kw)] + hub.routes(p)
    else:
        code = r"([A-Za-z0-9]{4,12})"
        routes += [(rf"{p}{code}/?", JoinInfoHandler, kw), (rf"{p}{code}/join", JoinHandler, kw),
                   (rf"{p}{code}/report", AttemptHandler, kw), (rf"{p}{code}/event", EventHandler, kw)]
    return web.Application(routes, log_function=lambda handler: None, serve_traceback=False,
                           default_handler_class=NotFound, default_handler_args=kw,
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
