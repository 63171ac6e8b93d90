"""The workshop's live view, the parts that face a room and the internet: the report schema, the course's
names and misconceptions, the rate limits, the participant client, and the real server (`python -m
autograder.workshop serve`, in a subprocess on 127.0.0.1) under a host's mistakes and an attacker's.

Clients connect from other loopback addresses (127.0.0.2 and up) so that an address in the log or the
state file would show. Server helpers here (Server, workshop_server, Person) are shared by the other
workshop tests."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from autograder.catalog import exercise_ids
from autograder.workshop.course import load
from autograder.workshop.limits import Buckets, Rate
from autograder.workshop.names import pseudonym
from autograder.workshop.schema import MAX_BODY, SchemaError, anonymise_line, parse, parse_join
from tests.conftest import ROOT

EXERCISES = exercise_ids()
COURSE = load()
RESIDUAL_CHECKS = ["forward", "backward runs", "gradcheck", "caller's tensors unchanged"]
THE_BUG = tuple(RESIDUAL_CHECKS)
"""What the unfixed += fails: every check (the exercise counts none while backward still raises)."""


def report(failing=THE_BUG, **changes) -> dict:
    """A report of residual_add; by default the untouched bug's."""
    data = {"v": 2, "pseudonym": "amber-otter-12", "secret": "s" * 32, "exercise": "residual_add",
            "status": "failed" if failing else "passed",
            "checks": [{"name": n, "passed": n not in failing} for n in RESIDUAL_CHECKS],
            "error": "RuntimeError" if failing else None, "op": "torch.Tensor.add_" if failing else None,
            "grad_mode": True if failing else None}
    data.update(changes)
    return data


def body(data) -> bytes:
    return json.dumps(data).encode()


# --- the schema and the course's names ----------------------------------------------------------------
def test_the_server_side_imports_no_torch():
    code = ("import sys, autograder.workshop.cli, autograder.workshop.server, autograder.workshop.host, "
            "autograder.workshop.export, autograder.workshop.client; from autograder.workshop.course import load; "
            "load(); assert 'torch' not in sys.modules, 'the server must start without torch'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_a_valid_report_parses():
    parsed = parse(body(report(feedback="[FAIL] backward runs\n  Backward failed.")), EXERCISES, COURSE.checks)
    assert parsed.failing == THE_BUG and parsed.grad_mode is True
    assert parsed.feedback == "[FAIL] backward runs\n  Backward failed."


@pytest.mark.parametrize("bad", [
    b"", b"not json", b"[]", b'"a string"', b"[" * 3000 + b"]" * 3000, b"\xff\xfe",
    body(report(extra="x")), body({k: v for k, v in report().items() if k != "exercise"}),
    body(report(v=True)), body(report(v=1)), body(report(exercise="os.system")), body(report(exercise="nope")),
    body(report(status="passed!")), body(report(checks="forward")), body(report(checks=[{"name": "x"}])),
    body(report(checks=[{"name": "forward", "passed": 1}])),
    body(report(checks=[{"name": "forward", "passed": True}] * 2)),
    body(report(checks=[{"name": "Free pizza in room 101", "passed": False}])),  # not a check of the exercise
    body(report(pseudonym="Robert'); DROP TABLE participants;--")), body(report(pseudonym="x" * 31)),
    body(report(secret="short")), body(report(secret="x" * 65)), body(report(grad_mode="yes")),
    body(report(op="__import__('os').system('id')")), body(report(error="<img src=x>")),
    body(report(line="x" * 161)), body(report(feedback="bell\x07")), body(report(feedback="\u202eevil")),
    b'{"v": 2, "pseudonym": NaN}', body(report(feedback="x" * (MAX_BODY + 1))),
])
def test_anything_else_is_refused(bad):
    with pytest.raises(SchemaError):
        parse(bad, EXERCISES, COURSE.checks)


@pytest.mark.parametrize("bad", [b'{"v": 2, "pseudonym": "amber-otter-12"}', b'{"v": 2, "seat": "a\\nb"}',
                                 b'{"v": 2, "seat": "\\u202eevil"}', b'{"v": 2, "seat": 7}'])
def test_a_bad_join_is_refused(bad):
    with pytest.raises(SchemaError):
        parse_join(bad)


def test_culprit_lines_are_anonymised():
    assert anonymise_line("out += x  # Ada Lovelace's fix") == "out += x"
    assert (anonymise_line("w.data -= lr * open('/home/ada/secret.txt').read()  # hm")
            == "w.data -= lr * open('…').read()")
    assert anonymise_line('h = f"{name}#1"; y += 1') == "h = f'…'; y += 1"


def test_shared_feedback_names_no_file():
    from autograder.workshop.schema import clean_feedback

    text = "at line 18 of /home/ada/course/answer.py (`out += x`); C:\\Users\\ada\\nb.py; scaled by 1/(1-p)"
    assert clean_feedback(text) == "at line 18 of <cell> (`out += x`); <cell>; scaled by 1/(1-p)"


def test_pseudonyms_fit_the_schema():
    names = {pseudonym() for _ in range(200)}
    assert len(names) > 190 and all(parse(body(report(pseudonym=n)), EXERCISES).pseudonym == n for n in names)


def test_token_buckets():
    now = [0.0]
    buckets = Buckets(Rate(per_second=1, burst=3), max_keys=2, clock=lambda: now[0])
    assert [buckets.allow("a") for _ in range(4)] == [True, True, True, False]
    now[0] += 1.0
    assert buckets.allow("a") and not buckets.allow("a")
    assert buckets.allow("b") and not buckets.allow("c")  # at most max_keys keys
    now[0] += 100
    buckets.sweep(now[0])
    assert len(buckets) == 0  # full buckets are forgotten, addresses with them


def test_the_course_knows_its_names_and_tells_no_grad_from_the_bug():
    assert COURSE.exercises == EXERCISES and set(COURSE.checks) == set(EXERCISES)
    bug = COURSE.match("residual_add", THE_BUG, "RuntimeError", "torch.Tensor.add_", True)
    no_grad = COURSE.match("residual_add", THE_BUG, "RuntimeError", "torch.Tensor.add_", False)
    silent = COURSE.match("residual_add", ("gradcheck",), None, None, None)
    assert (bug.label, no_grad.label) == ("the bug, unchanged", "no_grad around +=")
    assert ".data" in silent.label and "detach" in silent.label  # both silently wrong gradients: one signature
    assert "version counter" in no_grad.explanation and no_grad.read.startswith("Chapter 6")
    assert COURSE.op("torch.Tensor.add_") and COURSE.op("Free.pizza.in_room_101") is None
    assert COURSE.error("RuntimeError") and COURSE.error("MyOwnError") is None
    with pytest.raises(ValueError, match="nope"):
        COURSE.restricted(("residual_add", "nope"))


# --- the real server ----------------------------------------------------------------------------------------
class Server:
    """A running `serve`, its printed code and tokens, and plain-HTTP helpers from any loopback address."""

    def __init__(self, process: subprocess.Popen, out: Path, state: Path):
        self.process, self.out, self.state_file = process, out, state
        self.port, self.prefix, self.host_token = self.wait_for(
            r"Host: +http://127\.0\.0\.1:(\d+)(/\S*?)dashboard#token=(\S+)")
        self.port = int(self.port)
        self.code = self.wait_for(r"room ([A-Z0-9]{6})")[0]
        self.helper_token = self.wait_for(r"view=helper&token=(\S+)")[0]

    def wait_for(self, pattern: str, timeout: float = 30) -> tuple:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.out.read_text())
            if found:
                return found.groups()
            assert self.process.poll() is None, self.out.read_text()
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} not printed: {self.out.read_text()}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{self.code}"

    def request(self, method: str, path: str, data: bytes | None = None, headers: dict | None = None,
                source: str = "127.0.0.2") -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30, source_address=(source, 0))
        try:
            conn.request(method, path, body=data, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.read()
        except (ConnectionError, http.client.RemoteDisconnected) as e:
            return 0, repr(e).encode()
        finally:
            conn.close()

    def post(self, what: str, data, source: str = "127.0.0.2", code: str | None = None, **headers) -> tuple[int, dict]:
        raw = data if isinstance(data, bytes) else body(data)
        status, answer = self.request("POST", f"/{code or self.code}/{what}", raw,
                                      {"Content-Type": "application/json", **headers}, source)
        try:
            return status, json.loads(answer) if answer else {}
        except ValueError:
            return status, {}

    def join(self, seat: str = "", source: str = "127.0.0.2", **kept) -> Person:
        status, answer = self.post("join", {"v": 2, "seat": seat, **kept}, source)
        assert status == 200, (status, answer)
        return Person(self, answer["pseudonym"], answer["secret"] or kept.get("secret"), source)

    def state(self, view: str = "projector", token: str | None = None, source: str = "127.0.0.2", **headers):
        headers["Authorization"] = f"Bearer {token or self.host_token}"
        status, raw = self.request("GET", f"/api/state?view={view}", headers=headers, source=source)
        return status, (json.loads(raw) if status == 200 else None)

    def host(self, path: str, data, token: str | None = None, **headers) -> int:
        headers = {"Authorization": f"Bearer {token or self.host_token}", "X-Workshop": "1", **headers}
        return self.request("POST", f"/api/{path}", body(data), headers)[0]

    def stop(self, sig=signal.SIGINT) -> str:
        self.process.send_signal(sig)
        self.process.wait(timeout=60)
        return self.out.read_text()


class Person:
    """A participant who joined by plain HTTP, as the client does."""

    def __init__(self, server: Server, name: str, secret: str, source: str):
        self.server, self.name, self.secret, self.source = server, name, secret, source

    def report(self, **changes) -> tuple[int, dict]:
        return self.server.post("report", report(pseudonym=self.name, secret=self.secret, **changes), self.source)

    def event(self, kind: str) -> int:
        data = {"v": 2, "pseudonym": self.name, "secret": self.secret, "kind": kind}
        return self.server.post("event", data, self.source)[0]


def start(tmp_path: Path, *args: str, state: Path | None = None, name: str = "server") -> Server:
    state = state or tmp_path / "state" / "room.sqlite"
    out = tmp_path / f"{name}.log"
    with out.open("w") as log:
        process = subprocess.Popen([sys.executable, "-m", "autograder.workshop", "serve", "--host", "127.0.0.1",
                                    "--no-qr", "--state", str(state), *args], stdout=log, stderr=subprocess.STDOUT,
                                   cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        return Server(process, out, state)
    except BaseException:
        process.kill()
        raise


@contextmanager
def workshop_server(tmp_path: Path, *args: str, **kwargs):
    server = start(tmp_path, "--port", "0", *args, **kwargs)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def test_reports_in_state_out_and_no_address_kept(tmp_path):
    with workshop_server(tmp_path, "--stuck-attempts", "2", "--stuck-minutes", "0") as server:
        assert server.request("GET", f"/{server.code}")[0] == 200
        assert server.request("GET", "/ZZZZZZ")[0] == 404  # a wrong join code
        attack = "<script>alert(1)</script>"
        ada = server.join(seat=attack, source="127.0.0.3")
        assert ada.report()[0] == 200 and ada.report()[0] == 200
        bob = server.join(seat="A1", source="127.0.0.4")
        assert bob.report(failing=())[0] == 200
        eve = server.join(source="127.0.0.5")
        assert eve.report(grad_mode=False)[0] == 200
        status, data = server.state("helper")
        grid = {g["exercise"]: g for g in data["grid"]}
        assert status == 200 and data["participants"] == 3
        assert (grid["residual_add"]["passed"], grid["residual_add"]["failing"]) == (1, 2)
        assert grid["leaf_sgd"]["not_started"] == 3
        assert [p["seat"] for p in data["stuck_people"]] == [attack]
        assert data["top_ops"] == [{"exercise": "residual_add", "op": "torch.Tensor.add_", "participants": 2}]
        labels = {m["label"]: m["participants"] for m in data["misconceptions"]}
        assert labels == {"the bug, unchanged": 1, "no_grad around +=": 1}
        _, projector = server.state("projector")
        assert "people" not in projector and "stuck_people" not in projector  # aggregates only
        assert projector["stuck"] == [{"exercise": "residual_add", "count": 1}]
        assert projector["join"]["code"] == server.code
        log = server.stop()
    stored = b"".join(p.read_bytes() for p in server.state_file.parent.iterdir())
    assert ada.name.encode() in stored and ada.secret.encode() not in stored  # a hash of it only
    for source in ("127.0.0.3", "127.0.0.4", "127.0.0.5"):
        assert source not in log and source.encode() not in stored


def test_tokens_rights_spotlight_hints_and_notes(tmp_path):
    with workshop_server(tmp_path) as server:
        ada = server.join(source="127.0.0.3")
        assert ada.report(line="out += x")[0] == 200
        assert server.state(token="wrong")[0] == 401
        assert server.request("GET", "/api/state")[0] == 401
        assert server.state(token=server.code)[0] == 401  # the join code is no token
        assert server.state("helper", token=server.helper_token)[0] == 200
        assert server.state("controls", token=server.helper_token)[0] == 403
        assert server.state("controls", **{"X-Forwarded-For": "203.0.113.9"})[0] == 403  # host token via a tunnel
        assert server.state("anything")[0] == 403
        _, data = server.state("controls")
        (line,) = data["lines"]
        assert line["line"] == "out += x" and "pseudonym" not in line and "seat" not in line
        assert server.host("spotlight", {"id": line["id"]}, token=server.helper_token) == 403
        assert server.host("spotlight", {"id": line["id"]}, **{"X-Workshop": ""}) == 400  # a cross-site form
        assert server.host("spotlight", {"id": "0" * 16}) == 404 and server.host("spotlight", {"id": ["x"]}) == 404
        assert server.host("spotlight", {"id": line["id"]}) == 204
        assert server.state(token=server.helper_token)[1]["spotlight"]["line"] == "out += x"
        (wrong,) = data["misconceptions"]
        assert server.host("spotlight", {"misconception": wrong["id"]}) == 204
        shown = server.state()[1]["spotlight"]
        assert shown["label"] == "the bug, unchanged" and shown["explanation"] and "line" not in shown
        assert server.host("spotlight", {"id": None}) == 204 and server.state()[1]["spotlight"] is None
        # a hint reaches the next report of its exercise, once
        assert server.host("hint", {"text": "x" * 301}) == 400 and server.host("hint", {"text": "a\x1bb"}) == 400
        assert server.host("hint", {"text": "Read the op name", "exercise": "residual_add"}) == 204
        assert server.host("hint", {"text": "For rnn only", "exercise": "rnn_hidden"}) == 204
        assert ada.report()[1]["hints"] == ["Read the op name"] and ada.report()[1]["hints"] == []
        # sticky notes, and a secret is needed to write as someone
        assert ada.event("stuck") == 200
        assert [n["note"] for n in server.state("helper")[1]["notes"]] == ["stuck"]
        assert ada.report(failing=())[0] == 200  # a pass takes the note down
        assert server.state("helper")[1]["notes"] == []
        forger = Person(server, ada.name, "f" * 32, "127.0.0.9")
        assert forger.report(failing=())[0] == 403 and forger.event("left") == 403
        assert ada.event("left") == 200 and server.state()[1]["participants"] == 0


def test_malformed_oversized_and_odd_requests_are_refused_and_the_server_goes_on(tmp_path):
    with workshop_server(tmp_path) as server:
        ada = server.join()
        assert server.post("report", b"{not json")[0] == 400
        assert server.post("report", b"[" * 5000)[0] == 400
        assert server.post("report", report(), **{"Content-Type": "text/plain"})[0] == 415
        assert server.post("report", b"x" * (4 << 20))[0] in (0, 400, 413)  # 4 MiB: refused before it is read
        assert ada.report(checks=[{"name": "Free pizza in room 101", "passed": False}])[0] == 400
        assert ada.report(op="Free.pizza.in_room_101", error="Pizza")[0] == 200  # not the course's: shown as none
        _, data = server.state()
        assert data["top_ops"] == [] and "pizza" not in json.dumps(data).lower()
        assert server.post("report", report(), code="WRONG1")[0] == 404
        assert server.request("GET", "/../../etc/passwd")[0] == 404
        assert server.request("GET", "/static/..%2fserver.py")[0] == 404
        assert server.request("GET", "/static/dashboard.js")[0] == 200
        assert ada.report()[0] == 200  # still serving
        log = server.stop()
    assert "127.0.0.2" not in log


def test_floods_fakes_and_a_full_room(tmp_path):
    with workshop_server(tmp_path, "--max-participants", "20", "--address-rate", "5",
                         "--gone-minutes", "0.05") as server:
        # one participant: a burst of 10 reports, then 0.5 per second
        ada = server.join(source="127.0.0.3")
        same = [ada.report()[0] for _ in range(15)]
        assert same.count(200) == 10 and same[10:] == [429] * 5
        # fake participants from addresses of their own fill the room; the next newcomer is told why
        fakes = [server.join(source=f"127.0.1.{i}") for i in range(19)]
        status, answer = server.post("join", {"v": 2}, "127.0.1.99")
        assert status == 503 and "full" in answer["error"]
        # fakes that never come back are gone after --gone-minutes: the room has space again
        time.sleep(0.05 * 60 + 0.5)
        assert server.join(source="127.0.1.100").name not in {f.name for f in fakes}
        # the host sees the refusals and raises the cap
        _, data = server.state("controls")
        assert data["limits"]["refused"]["full"] == 1 and data["participants"] == 1
        assert server.host("limits", {"max_participants": 0}) == 400
        assert server.host("limits", {"max_participants": 300}) == 204
        assert server.state("controls")[1]["limits"]["max_participants"] == 300
        # one address, as fast as it can: after a burst of 20, refused (429) before anything is parsed
        flood = [server.post("report", b"{", "127.0.0.6")[0] for _ in range(100)]
        # (a loaded machine sends them slower, so the bucket refills a little: counted loosely, never timed)
        assert flood.count(429) >= 50 and 429 in flood[20:]
        log = server.stop()
    for source in ("127.0.0.3", "127.0.1.10", "127.0.0.6"):
        assert source not in log


def test_slow_clients_cannot_exhaust_connections_nor_rotate_a_forwarded_address(tmp_path):
    with workshop_server(tmp_path, "--connections-per-address", "5", "--max-connections", "12",
                         "--trust-forwarded", "x-forwarded-for", "--address-rate", "2") as server:
        import socket

        held = []
        for _ in range(8):  # a slowloris: connections that never finish their request
            s = socket.create_connection(("127.0.0.1", server.port), source_address=("127.0.0.7", 0))
            s.sendall(b"GET /api/state HTTP/1.1\r\nHost: x\r\n")
            held.append(s)
        time.sleep(0.3)
        closed = 0
        for s in held:
            s.settimeout(0.5)
            try:
                closed += s.recv(1) == b""
            except TimeoutError:
                pass  # held open, waiting for the rest of the request
            except ConnectionResetError:
                closed += 1  # closed with the request unread
        assert closed == 3  # beyond 5 from one address, each new one is closed at once
        assert server.request("GET", f"/{server.code}", source="127.0.0.8")[0] == 200  # others are served
        for s in held:
            s.close()
        # through the trusted proxy (a loopback peer): the header's last entry counts, not X-Real-Ip
        statuses = [server.request("GET", f"/{server.code}", headers={"X-Real-Ip": f"10.0.0.{i}",
                                                                      "X-Forwarded-For": f"10.9.{i}.1, 198.51.100.7"},
                                   source="127.0.0.1")[0] for i in range(30)]
        assert statuses.count(429) >= 20
        _, data = server.state("controls", source="127.0.0.1")
        assert data["limits"]["connections_refused"] >= 3


def test_a_restart_keeps_the_room_exports_never_overwrite_and_hangup_stops_cleanly(tmp_path):
    export = tmp_path / "exports"
    first = start(tmp_path, "--port", "0", "--export", str(export), "--exercises", "residual_add,rnn_hidden")
    ada = first.join(seat="A1")
    assert ada.report()[0] == 200
    assert first.host("hint", {"text": "Look at the op"}) == 204
    log = first.stop(signal.SIGHUP)  # a closed terminal: exports and stops like Ctrl-C
    assert "exported:" in log and "kept in" in log
    second = start(tmp_path, "--port", str(first.port), "--export", str(export), name="second")
    try:
        assert ((second.code, second.host_token, second.helper_token)
                == (first.code, first.host_token, first.helper_token))
        assert "resumed (1 participant so far)" in second.out.read_text()
        assert ada.report(failing=())[0] == 200  # the same secret works: no new join
        _, data = second.state()
        assert [g["exercise"] for g in data["grid"]] == ["residual_add", "rnn_hidden"]  # the room's exercises kept
        assert data["participants"] == 1 and data["grid"][0]["passed"] == 1
    finally:
        second.stop()
    folders = sorted(p.name for p in export.iterdir())
    assert len(folders) == 2 and all(f.startswith(f"workshop-{first.code}-") for f in folders)
    progress = [(export / f / "progress.csv").read_text() for f in folders]
    assert "residual_add,1,0,1,0," in progress[0] and "residual_add,1,0,0,1," in progress[1]
    text = "".join(p.read_text() for p in export.rglob("*.csv"))
    assert ada.name not in text and "A1" not in text and "the bug, unchanged" in text  # aggregates only
    ended = subprocess.run([sys.executable, "-m", "autograder.workshop", "end", "--state", str(first.state_file)],
                           capture_output=True, text=True, cwd=ROOT)
    assert ended.returncode == 0 and not first.state_file.exists() and "deleted the room" in ended.stdout


def test_a_busy_port_or_a_bad_export_is_one_line_at_start_and_leaves_nothing(tmp_path):
    with workshop_server(tmp_path) as server:
        busy = subprocess.run([sys.executable, "-m", "autograder.workshop", "serve", "--host", "127.0.0.1",
                               "--port", str(server.port), "--state", str(tmp_path / "other" / "room.sqlite")],
                              capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert busy.returncode == 2 and busy.stderr.strip().count("\n") == 0 and "busy" in busy.stderr
    assert "Traceback" not in busy.stderr and not (tmp_path / "other" / "room.sqlite").exists()
    (tmp_path / "file").write_text("")
    bad = subprocess.run([sys.executable, "-m", "autograder.workshop", "serve", "--port", "0", "--state",
                          str(tmp_path / "third" / "room.sqlite"), "--export", str(tmp_path / "file" / "x")],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --export") and "Traceback" not in bad.stderr
    assert not (tmp_path / "third").exists()
    unknown = subprocess.run([sys.executable, "-m", "autograder.workshop", "serve", "--exercises", "residual_add,nope",
                              "--state", str(tmp_path / "fourth" / "room.sqlite")],
                             capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert unknown.returncode == 2 and "nope" in unknown.stderr and "Traceback" not in unknown.stderr


def test_the_dashboard_waits_for_a_change_and_answers_at_once(tmp_path):
    with workshop_server(tmp_path) as server:
        ada = server.join()
        time.sleep(0.5)  # dashboards are woken at most every 0.2 s: the join's wake-up has passed
        _, data = server.state()
        import threading

        answered = {}

        def wait():
            start = time.monotonic()
            status, raw = server.request("GET", f"/api/state?since={data['version']}",
                                         headers={"Authorization": f"Bearer {server.host_token}"})
            answered.update(status=status, seconds=time.monotonic() - start, data=json.loads(raw))

        waiter = threading.Thread(target=wait)
        waiter.start()
        time.sleep(1.0)
        assert not answered  # nothing changed: it waits
        sent = time.monotonic()
        ada.report()
        waiter.join(timeout=10)
        assert answered["status"] == 200 and answered["data"]["version"] > data["version"]
        assert time.monotonic() - sent < 12  # at once, not after the 25 s long poll (only that is caught here)
