"""Issue 33: nothing a participant does is lost, and the room's state is the truth. Through the real server
(`python -m autograder.workshop serve`, restarted and killed) and the participant's real sender
(sender.py, the thread every check() posts through)."""

from __future__ import annotations

import csv
import signal
import sqlite3
import threading
import time

from autograder.workshop import sender as sender_module
from autograder.workshop.sender import Sender
from autograder.workshop.storage import Store, Thresholds
from autograder.workshop.views import state as view_state
from tests.test_workshop import COURSE, RESIDUAL_CHECKS, report, start, workshop_server

RNN = sorted(COURSE.checks["rnn_hidden"])


def script(i: int) -> list[dict]:
    """Participant i's checks, in order: the starter, the bug, a wrong fix, and (for most) a pass; the
    fields beyond who sent them."""
    starter = report(status="not_attempted", error="NotImplementedError", op=None, grad_mode=None)
    steps = [starter, report(), report(grad_mode=False), report(failing=())]
    if i % 4 == 3:  # never passes: stuck
        steps[-1] = report(failing=RESIDUAL_CHECKS[1:2])
    if i % 3 == 0:  # a second exercise, failing
        steps.append(report(exercise="rnn_hidden", failing=RNN[:1],
                            checks=[{"name": n, "passed": n != RNN[0]} for n in RNN], error=None, op=None,
                            grad_mode=None))
    return [{k: v for k, v in step.items() if k not in ("pseudonym", "secret")} for step in steps]


def comparable(data: dict) -> dict:
    """What the room shows, without what differs between two rooms (codes, versions, the order of ties)."""
    return {"participants": data["participants"], "gone": data["gone"], "stuck": data["stuck"],
            "grid": [{k: g[k] for k in ("exercise", "passed", "failing", "not_started")} for g in data["grid"]],
            "misconceptions": sorted((m["id"], m["participants"]) for m in data["misconceptions"]),
            "top_checks": sorted((c["exercise"], c["check"], c["participants"]) for c in data["top_checks"]),
            "top_ops": sorted((c["exercise"], c["op"], c["participants"]) for c in data["top_ops"])}


def test_a_restart_under_load_loses_no_report_and_the_room_equals_a_never_stopped_one(tmp_path, monkeypatch):
    monkeypatch.setattr(sender_module, "RETRY", 0.5)
    args = ("--stuck-attempts", "2", "--stuck-minutes", "0")
    (tmp_path / "truth").mkdir()
    truth = start(tmp_path / "truth", "--port", "0", *args, name="truth")
    first = start(tmp_path, "--port", "0", *args, name="first")
    second = None
    people = 16
    try:
        joined = [(first.join(), truth.join()) for _ in range(people)]
        senders = [Sender() for _ in range(people)]
        deliveries = []
        lock = threading.Lock()

        def check(i: int, step: dict) -> None:
            mine, theirs = joined[i]
            delivery = senders[i].send(f"{first.url}/report", {**step, "v": 2, "pseudonym": mine.name,
                                                               "secret": mine.secret}, {})
            assert theirs.report(**step)[0] == 200  # the same check, to a server that never stops
            with lock:
                deliveries.append(delivery)

        scripts = [script(i) for i in range(people)]
        for i in range(people):  # the first check of everyone arrives as usual
            check(i, scripts[i][0])
        assert all(d.done.wait(5) and d.ok for d in deliveries)

        def room(rounds: range) -> None:  # the room goes on checking, whatever the server does
            for r in rounds:
                for i in range(people):
                    if r < len(scripts[i]):
                        check(i, scripts[i][r])
                time.sleep(0.05)

        load = threading.Thread(target=room, args=(range(1, 3),))
        load.start()
        time.sleep(0.02)
        first.process.send_signal(signal.SIGKILL)  # a hard kill, in the middle of the room's posts
        first.process.wait()
        load.join()
        room(range(3, 4))  # made while the server is down
        during = [d for d in deliveries if d.kept]
        assert during, "some reports were made while the server was down"
        assert all(not d.arrived.is_set() for d in during[-people:])
        second = start(tmp_path, "--port", str(first.port), *args, state=first.state_file, name="second")
        room(range(4, 6))
        assert all(s.drained(30) for s in senders)
        assert all(d.arrived.is_set() and d.ok for d in deliveries), [d.why for d in deliveries if not d.ok]
        made = sum(len(s) for s in scripts)
        assert len(deliveries) == made
        with sqlite3.connect(second.state_file) as db:  # each report counted once, sent again or not
            assert db.execute("SELECT count(*), count(DISTINCT rid) FROM reports").fetchone() == (made, made)
        for view in ("projector", "helper"):
            assert comparable(second.state(view)[1]) == comparable(truth.state(view)[1])
    finally:
        for server in (truth, first, second):
            if server is not None and server.process.poll() is None:
                server.process.kill()
                server.process.wait()


def test_a_report_sent_twice_counts_once_and_an_old_one_keeps_its_minutes(tmp_path):
    with workshop_server(tmp_path, "--stuck-attempts", "2", "--stuck-minutes", "0") as server:
        ada = server.join()
        assert ada.report(id="abcdefgh1234")[1]["counted"] is True
        status, answer = ada.report(id="abcdefgh1234")  # its answer was lost: sent again
        assert status == 200 and answer["counted"] is False
        assert ada.report(id="abcdefgh1235", ago=5.0)[1]["counted"] is True
        _, data = server.state("helper")
        (person,) = data["stuck_people"]
        assert person["failures"] == 2
        for bad in (-1, 86401, "5", True):
            assert ada.report(ago=bad)[0] == 400
        assert ada.report(id="x")[0] == 400


def test_a_refused_report_is_said_once_and_never_sent_again(tmp_path):
    with workshop_server(tmp_path, "--exercises", "residual_add") as server:
        ada = server.join()
        sender = Sender()
        line, _ = sender.report(f"{server.url}/report", {**report(exercise="rnn_hidden"), "pseudonym": ada.name,
                                                          "secret": ada.secret}, {}, ada.name, 2.0)
        assert line.startswith("Workshop: report NOT received: the server refused it (HTTP 400")
        assert "not sent again" in line and sender.pending == 0
        line, _ = sender.report(f"{server.url}/report", {**report(), "pseudonym": ada.name, "secret": ada.secret}, {},
                                ada.name, 2.0)
        assert line == f"Workshop: report received ({ada.name})."


def test_the_lines_say_what_happened_while_the_server_is_down_and_when_it_is_back(tmp_path, monkeypatch):
    monkeypatch.setattr(sender_module, "RETRY", 0.3)
    first = start(tmp_path, "--port", "0", name="first")
    ada = first.join()
    data = {**report(), "pseudonym": ada.name, "secret": ada.secret}
    sender = Sender()
    url = f"{first.url}/report"
    assert sender.report(url, data, {}, ada.name, 2.0)[0] == f"Workshop: report received ({ada.name})."
    first.stop()
    line, _ = sender.report(url, data, {}, ada.name, 2.0)
    assert line.startswith("Workshop: report NOT received yet (cannot reach the server") and "kept" in line
    line, _ = sender.report(url, data, {}, ada.name, 2.0)
    assert "NOT received yet" in line and "(2 waiting)" in line
    second = start(tmp_path, "--port", str(first.port), state=first.state_file, name="second")
    try:
        assert sender.drained(10)
        line, _ = sender.report(url, data, {}, ada.name, 2.0)
        assert line == (f"Workshop: report received ({ada.name}), after the 2 kept while the server did not "
                        "answer, in order.")
        line, _ = sender.report(url, data, {}, ada.name, 2.0)
        assert line == f"Workshop: report received ({ada.name})."  # said once
        _, state = second.state("helper")
        assert state["stuck_people"] == [] and state["people"][0]["cells"]["residual_add"] == "failing"
    finally:
        second.stop()
    with sqlite3.connect(first.state_file) as db:
        assert db.execute("SELECT count(*) FROM reports").fetchone() == (5,)


def test_gone_never_erases_who_took_part_and_the_export_counts_everyone(tmp_path):
    export = tmp_path / "exports"
    server = start(tmp_path, "--port", "0", "--gone-minutes", "0.02", "--export", str(export),
                   "--exercises", "residual_add,rnn_hidden")
    ada, bob, eve = server.join(), server.join(), server.join()
    assert ada.report(failing=())[0] == 200 and bob.report()[0] == 200
    time.sleep(1.5)  # their notebooks closed: gone
    _, data = server.state()
    assert data["participants"] == 0 and data["gone"] == 3
    assert data["grid"][0]["passed"] == 1  # what they reached stays on the projector
    server.stop()
    (folder,) = export.iterdir()
    rows = list(csv.DictReader((folder / "progress.csv").open()))
    assert (rows[0]["exercise"], rows[0]["participants"], rows[0]["passed"], rows[0]["failing"],
            rows[0]["not_started"]) == ("residual_add", "3", "1", "1", "1")
    assert (rows[1]["participants"], rows[1]["not_started"]) == ("3", "3")
    assert (folder / "grid.png").stat().st_size > 1000
    del eve


def test_the_spotlight_the_refusals_and_the_starts_survive_a_restart(tmp_path):
    first = start(tmp_path, "--port", "0")
    ada = first.join()
    assert ada.report(exercise="nope")[0] == 400
    assert first.post("report", report(pseudonym=ada.name, secret="t" * 32))[0] == 403
    misconception = next(m for m in COURSE.by_id.values() if m.exercise == "residual_add").id
    assert first.host("spotlight", {"misconception": misconception}) == 204
    assert first.host("start", {"exercise": "residual_add"}) == 204
    assert first.host("start", {"exercise": "nope"}) == 400
    _, before = first.state("controls")
    first.stop(signal.SIGTERM)
    second = start(tmp_path, "--port", str(first.port), state=first.state_file, name="second")
    try:
        _, after = second.state("controls")
        assert after["spotlight"] == before["spotlight"] and after["spotlight"]["id"] == misconception
        assert after["limits"]["refused"] == before["limits"]["refused"]
        assert after["limits"]["refused"]["invalid"] == 1 and after["limits"]["refused"]["secret"] == 1
    finally:
        second.stop()


def test_running_the_starter_again_and_again_is_stuck_not_not_started(tmp_path):
    with workshop_server(tmp_path, "--stuck-attempts", "3", "--stuck-minutes", "0") as server:
        ada = server.join(seat="C3")
        for _ in range(3):
            assert ada.report(status="not_attempted", error="NotImplementedError", op=None, grad_mode=None)[0] == 200
        _, data = server.state("helper")
    grid = {g["exercise"]: g for g in data["grid"]}
    assert (grid["residual_add"]["failing"], grid["residual_add"]["not_started"]) == (1, 0)
    assert data["stuck"] == [{"exercise": "residual_add", "count": 1}]
    assert [p["seat"] for p in data["stuck_people"]] == ["C3"] and data["misconceptions"] == []


def test_minutes_to_pass_are_from_when_the_exercise_started(tmp_path):
    store = Store(tmp_path / "room.sqlite")
    t0 = 1_000_000.0
    ada = store.add("amber-otter-12", "s" * 32, "", t0)  # joined at the top of residual_add's notebook
    bob = store.add("brisk-heron-13", "s" * 32, "", t0)
    from autograder.workshop.schema import Attempt

    def attempt(name, exercise="residual_add", passed=True):
        return Attempt(name, exercise, "passed" if passed else "failed",
                       tuple((c, passed) for c in RESIDUAL_CHECKS))

    store.record(ada, attempt("amber-otter-12"), t0 + 600, None)  # worked ten minutes, passed at the first check
    store.record(bob, attempt("brisk-heron-13", passed=False), t0 + 60, None)
    store.record(bob, attempt("brisk-heron-13"), t0 + 240, None)
    store.joined(bob, t0 + 300)  # the second notebook
    store.record(bob, attempt("brisk-heron-13", "rnn_hidden", passed=False), t0 + 400, None)
    store.joined(bob, t0 + 500)  # a kernel restart in the middle: the exercise started at the notebook's join
    store.record(bob, attempt("brisk-heron-13", "rnn_hidden"), t0 + 900, None)
    grid = {g["exercise"]: g for g in view_state(store, COURSE, t0 + 901, Thresholds())["grid"]}
    assert grid["residual_add"]["median_minutes"] == 7.0  # (10 + 4) / 2
    assert grid["rnn_hidden"]["median_minutes"] == 10.0
    # the host started residual_add at t0 + 120: from there for ada; bob had checked before, from his join
    started = view_state(store, COURSE, t0 + 901, Thresholds(), room={"starts": {"residual_add": t0 + 120}})
    assert {g["exercise"]: g["median_minutes"] for g in started["grid"]}["residual_add"] == 6.0  # (8 + 4) / 2
    store.close()


def test_a_lowercase_code_joins_and_refusals_say_their_real_reason_without_a_banner(tmp_path):
    import http.client
    import json

    with workshop_server(tmp_path) as server:
        ada = server.join()
        status, answer = server.post("report", report(pseudonym=ada.name, secret=ada.secret), code=server.code.lower())
        assert status == 200 and answer["counted"] is True
        assert server.request("GET", f"/{server.code.lower()}")[0] == 200
        for path, code, words in (("/nothing/here", 404, "no such page"), ("/static/x.js", 404, "no such page"),
                                  ("/ZZZZZZ", 404, "no workshop with this code")):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            conn.request("GET", path)
            response = conn.getresponse()
            assert response.status == code and response.getheader("Server") is None, path
            assert words in json.loads(response.read())["error"], path
            conn.close()
        status, raw = server.request("POST", "/api/hint", b'{"text": "x"}',
                                     {"Authorization": f"Bearer {server.helper_token}", "X-Workshop": "1"})
        assert status == 403 and "only the host" in json.loads(raw)["error"]
        status, raw = server.request("GET", "/api/state?view=controls",
                                     headers={"Authorization": f"Bearer {server.helper_token}"})
        assert status == 403 and "not for this token" in json.loads(raw)["error"]


def test_the_qr_code_opens_a_page_with_the_line_to_copy(tmp_path):
    with workshop_server(tmp_path) as server:
        status, page = server.request("GET", f"/{server.code}", headers={"Accept": "text/html,*/*"})
        assert status == 200 and b"<pre>check.join(&quot;http://127.0.0.1:" in page
        assert f"{server.code}&quot;, seat=&quot;&quot;)</pre>".encode() in page and b"<script" not in page
        status, raw = server.request("GET", f"/{server.code}")  # the client's check.join: JSON
        assert status == 200 and raw.startswith(b"{")


def test_behind_a_proxy_that_keeps_its_path_the_room_serves_under_that_path(tmp_path, monkeypatch):
    """`--public-url https://host/ws/room`: a reverse proxy that forwards `/ws/room/CODE/join` as it is. The
    server serves every route under that path (the join line, the participant's client, the dashboard), and
    a request without it (a proxy that strips the path after all) is told where the room is."""
    import json
    import socket

    from autograder.workshop import client

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "machine"))  # the participant's kept identity
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = start(tmp_path, "--port", str(port), "--public-url", f"http://127.0.0.1:{port}/ws/room",
                   state=tmp_path / "prefixed.sqlite", name="prefixed")
    try:
        assert server.prefix == "/ws/room/"
        assert f"http://127.0.0.1:{port}/ws/room/{server.code}" in server.out.read_text()  # the join line
        assert server.request("GET", f"/ws/room/{server.code.lower()}")[0] == 200
        status, raw = server.request("GET", f"/{server.code}")
        assert status == 404 and "/ws/room/CODE" in json.loads(raw)["error"]
        client.join(f"http://127.0.0.1:{port}/ws/room/{server.code}")
        try:
            status, raw = server.request("GET", "/ws/room/api/state?view=projector",
                                         headers={"Authorization": f"Bearer {server.host_token}"})
            assert status == 200 and json.loads(raw)["participants"] == 1
            assert server.request("GET", "/ws/room/dashboard")[0] == 200
        finally:
            client.leave()
    finally:
        server.process.kill()
        server.process.wait()


def test_a_public_url_path_that_is_no_path_prefix_is_refused_in_words(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "autograder.workshop", "serve", "--port", "0", "--no-qr",
                           "--state", str(tmp_path / "s.sqlite"), "--public-url", "http://h/a b?x=1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "--public-url's path" in done.stdout + done.stderr
