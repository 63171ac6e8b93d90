"""The participant's one background thread: posts attempts in order and keeps, in this kernel, every one the
server has not received, sending it again until it arrives; heartbeats are posted as they come. Standard
library only; nothing here raises into a check.

Nothing a participant does is lost while the kernel lives: a report that gets no answer (a server restarting,
Wi-Fi dropping, a timeout, "too many requests") stays at the head of the queue and is tried again every
RETRY seconds, the later ones behind it, so that they arrive in the order they were made. Each report carries
an id drawn here (the server counts an id once, so a report whose answer was lost and that is sent again
counts once) and how long ago it was made (`ago`, so that the room's minutes are those of the check, not of
its delivery). A report the server refuses (a 4xx other than 408 and 429: an exercise outside the room, a
participant of another room) is never sent again, and the check says so.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass, field

from ..feedback.wording import say

TIMEOUT = 2.0
RETRY = 2.0  # seconds between two tries of a report not received: also how stale "known to be down" can be
KEEP = 1000  # reports kept in the kernel while the server does not answer (a check a second, a quarter hour)
TRANSIENT = (0, 408, 429, 500, 502, 503, 504)  # HTTP statuses worth sending again (0: no answer at all)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # an attempt (and a secret or hub token) goes to the joined URL only
        return None


OPENER = urllib.request.build_opener(NoRedirect)


@dataclass
class Delivery:
    """What became of one post: `ok`, the answer's JSON, or why not (words). `done` is set at its first
    outcome: received, refused (`status` says how), or `kept` to be sent again; `arrived` once it is received."""

    done: threading.Event = field(default_factory=threading.Event)
    ok: bool = False
    answer: dict = field(default_factory=dict)
    why: str = ""
    status: int = 0  # the HTTP status of a refusal; 0 when there was no answer
    kept: bool = False
    arrived: threading.Event = field(default_factory=threading.Event)


def post(url: str, data: dict, headers: dict[str, str], timeout: float = TIMEOUT) -> Delivery:
    """One POST of JSON, now, in this thread."""
    delivery = Delivery()
    request = urllib.request.Request(url, data=json.dumps(data).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "User-Agent": "autograder-workshop",
                                              **headers})
    try:
        with OPENER.open(request, timeout=timeout) as response:
            raw = response.read(65536)
        answer = json.loads(raw) if raw else {}
        delivery.ok, delivery.answer = True, answer if isinstance(answer, dict) else {}
    except urllib.error.HTTPError as e:
        delivery.why, delivery.status = f"HTTP {e.code}: {_reason(e)}", e.code
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        delivery.why = (say("workshop: no answer in time") if isinstance(reason, TimeoutError)
                        else say("workshop: cannot reach", why=reason))
    except ValueError:
        delivery.why = say("workshop: answer not json")
    delivery.done.set()
    return delivery


def _reason(e: urllib.error.HTTPError) -> str:
    try:
        found = json.loads(e.read(2048)).get("error")
    except Exception:  # noqa: BLE001 - any body at all
        found = None
    return found if isinstance(found, str) else str(e.reason)


class Sender:
    """One daemon thread posting queued reports in order, each until it arrives or is refused."""

    def __init__(self) -> None:
        self.backlog: deque[tuple[str, dict, dict[str, str], Delivery, float]] = deque()
        self.lock = threading.Condition()
        self.down_since: float | None = None  # the head's last try failed; none succeeded since
        self.why = ""
        self.late = 0  # reports kept, then received, not yet told to the participant
        self.lost: list[str] = []  # why reports kept were then refused, not yet told
        self.hints: list[str] = []  # hints that came with the answers to kept reports
        self.stopped = threading.Event()
        threading.Thread(target=self._run, name="autograder-workshop", daemon=True).start()

    @property
    def pending(self) -> int:
        """Reports queued, in flight or kept."""
        return len(self.backlog)

    def send(self, url: str, data: dict, headers: dict[str, str]) -> Delivery:
        delivery = Delivery()
        with self.lock:
            if len(self.backlog) >= KEEP:
                delivery.why = say("workshop: too many waiting")
                delivery.done.set()
                return delivery
            if self.down_since is not None:  # known down: kept at once, never waited for
                delivery.kept, delivery.why = True, self.why
                delivery.done.set()
            data = {**data, "id": data.get("id") or secrets.token_urlsafe(12)}
            self.backlog.append((url, data, headers, delivery, time.monotonic()))
            self.lock.notify()
        return delivery

    def report(self, url: str, data: dict, headers: dict[str, str], name: str, wait: float) -> tuple[str, list[str]]:
        """Sends one check's report and says, in one line, what became of it (waiting at most `wait` seconds,
        and not at all while the server is known to be down or an earlier report waits); and the hints that
        came back."""
        down, earlier = self.down_since, self.pending
        delivery = self.send(url, data, headers)
        if down is None and not earlier:
            delivery.done.wait(wait)
        with self.lock:
            late, self.late = self.late, 0
            hints, self.hints = self.hints, []
            lost, self.lost = self.lost, []
        if delivery.done.is_set() and delivery.ok:
            hints += [h for h in delivery.answer.get("hints", []) if isinstance(h, str)]
            line = (say("workshop: received with kept", pseudonym=name, late=late) if late
                    else say("workshop: received", pseudonym=name))
        elif delivery.done.is_set() and delivery.kept:
            line = say("workshop: kept", why=delivery.why, waiting=self.pending)
        elif delivery.done.is_set():  # refused, or not kept at all
            line = say("workshop: refused", why=delivery.why)
        elif down is not None or earlier:
            line = say("workshop: behind an earlier one", waiting=self.pending)
        else:
            line = say("workshop: not confirmed", wait=wait)
        if late and not (delivery.done.is_set() and delivery.ok):
            line += " " + say("workshop: kept ones arrived", late=late)
        if lost:
            line += " " + say("workshop: kept ones refused", lost=len(lost), why=lost[-1])
        return line, hints

    def drained(self, timeout: float) -> bool:
        """Waits until no report is left to send (for tests and the load benchmark)."""
        deadline = time.monotonic() + timeout
        while self.backlog and time.monotonic() < deadline:
            time.sleep(0.05)
        return not self.backlog

    def stop(self) -> None:
        self.stopped.set()
        with self.lock:
            self.lock.notify()

    def _run(self) -> None:
        while not self.stopped.is_set():
            with self.lock:
                while not self.backlog and not self.stopped.is_set():
                    self.lock.wait()
                if self.stopped.is_set():
                    return
                url, data, headers, delivery, made = self.backlog[0]
            ago = time.monotonic() - made
            done = post(url, {**data, "ago": round(ago, 1)} if ago >= 0.5 else data, headers)
            if not done.ok and done.status in TRANSIENT:
                with self.lock:
                    if self.down_since is None:
                        self.down_since = time.time()
                    self.why = done.why
                if not delivery.done.is_set():
                    delivery.kept, delivery.why = True, done.why
                    delivery.done.set()
                for _, _, _, later, _ in list(self.backlog)[1:]:  # all of them wait now: say so at once
                    if not later.done.is_set():
                        later.kept, later.why = True, done.why
                        later.done.set()
                self.stopped.wait(RETRY)
                continue
            with self.lock:
                self.backlog.popleft()
                if done.ok:
                    self.down_since = None
                    if delivery.kept:
                        self.late += 1
                        self.hints += [h for h in done.answer.get("hints", []) if isinstance(h, str)]
                elif delivery.kept:
                    self.lost.append(done.why)
            delivery.ok, delivery.answer, delivery.why, delivery.status = done.ok, done.answer, done.why, done.status
            delivery.done.set()
            if done.ok:
                delivery.arrived.set()


class Heartbeat:
    """Says "seen" every `seconds` while joined, so that the room shows who is here and who has gone."""

    def __init__(self, beat) -> None:
        self.beat, self.stopped = beat, threading.Event()
        self.seconds = 60.0
        threading.Thread(target=self._run, name="autograder-workshop-heartbeat", daemon=True).start()

    def _run(self) -> None:
        while not self.stopped.wait(self.seconds):
            try:
                self.beat()
            except Exception:  # noqa: BLE001, S110 - a missed heartbeat is only a missed heartbeat
                pass

    def stop(self) -> None:
        self.stopped.set()
