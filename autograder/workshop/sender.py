"""The participant's one background thread: posts attempts and heartbeats with a short timeout, and tells the
waiting check() what became of its attempt. Standard library only; nothing here raises into a check."""

from __future__ import annotations

import json
import queue
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from ..feedback.wording import say

TIMEOUT = 2.0


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # an attempt (and a secret or hub token) goes to the joined URL only
        return None


OPENER = urllib.request.build_opener(NoRedirect)


@dataclass
class Delivery:
    """What became of one post: `ok`, the answer's JSON, or why not (words)."""

    done: threading.Event = field(default_factory=threading.Event)
    ok: bool = False
    answer: dict = field(default_factory=dict)
    why: str = ""


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
        delivery.why = f"HTTP {e.code}: {_reason(e)}"
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        delivery.why = (say("workshop: no answer in time") if "timed out" in str(reason)
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
    """One daemon thread posting queued requests in order; a full queue drops the request (and says so)."""

    def __init__(self) -> None:
        self.queue: queue.Queue = queue.Queue(maxsize=32)
        self.down_since: float | None = None  # the last post failed; none succeeded since
        self.why = ""
        self.pending = 0  # posts queued or in flight
        threading.Thread(target=self._run, name="autograder-workshop", daemon=True).start()

    def send(self, url: str, data: dict, headers: dict[str, str]) -> Delivery:
        delivery = Delivery()
        try:
            self.queue.put_nowait((url, data, headers, delivery))
            self.pending += 1
        except queue.Full:
            delivery.why = say("workshop: too many waiting")
            delivery.done.set()
        return delivery

    def _run(self) -> None:
        while True:
            url, data, headers, delivery = self.queue.get()
            done = post(url, data, headers)
            delivery.ok, delivery.answer, delivery.why = done.ok, done.answer, done.why
            if done.ok:
                self.down_since = None
            elif self.down_since is None:
                self.down_since, self.why = time.time(), done.why
            self.pending -= 1
            delivery.done.set()


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
