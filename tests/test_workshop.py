"""The workshop's live view, the parts that face a room and the internet: the report schema, the rate limits,
the participant client (never breaking a check), and the real server under attack (floods, malformed and
oversized bodies, wrong tokens, a full room), with no client address in its log or its database.

The server runs as `python -m autograder.workshop serve` in a subprocess on 127.0.0.1; clients connect from
other loopback addresses (127.0.0.2 and up) so that an address in the log or the database would show."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from autograder.catalog import exercise_ids
from autograder.workshop import client
from autograder.workshop.limits import Buckets, Rate
from autograder.workshop.names import pseudonym
from autograder.workshop.schema import MAX_BODY, SchemaError, anonymise_line, parse
from tests.conftest import ROOT, solution_code

EXERCISES = exercise_ids()


def report(**changes) -> dict:
    data = {"v": 1, "pseudonym": "amber-otter-12", "seat": "B12", "exercise": "residual_add", "status": "failed",
            "checks": [{"name": "forward", "passed": True}, {"name": "backward runs", "passed": False}],
            "error": "RuntimeError", "op": "torch.Tensor.add_", "line": "out += x"}
    data.update(changes)
    return data


def body(data) -> bytes:
    return json.dumps(data).encode()


# --- the schema -----------------------------------------------------------------------------------------
def test_the_course_exercises_are_known_without_torch():
    from autograder.exercises import EXERCISES as REGISTRY  # the specs, with torch: the same ids, same order

    assert EXERCISES == tuple(REGISTRY)
    code = ("import sys, autograder.workshop.cli, autograder.workshop.server, autograder.workshop.export, "
            "autograder.workshop.client; from autograder.catalog import exercise_ids; exercise_ids(); "
            "assert 'torch' not in sys.modules, 'the server must start without torch'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_a_valid_report_parses():
    parsed = parse(body(report(seat="<script>alert(1)</script>")), EXERCISES)
    assert parsed.seat == "<script>alert(1)</script>"  # allowed: the page shows it as text (browser test)
    assert parsed.checks == (("forward", True), ("backward runs", False))


@pytest.mark.parametrize("bad", [
    b"", b"not json", b"[]", b'"a string"', b"[" * 3000 + b"]" * 3000, b"\xff\xfe",
    body(report(extra="x")), body({k: v for k, v in report().items() if k != "exercise"}),
    body(report(v=True)), body(report(v=2)), body(report(exercise="os.system")), body(report(exercise="nope")),
    body(report(status="passed!")), body(report(checks="forward")), body(report(checks=[{"name": "x"}])),
    body(report(checks=[{"name": "forward", "passed": 1}])),
    body(report(checks=[{"name": "forward", "passed": True}] * 2)),
    body(report(checks=[{"name": f"c{i}", "passed": True} for i in range(17)])),
    body(report(checks=[{"name": "<b>x</b>", "passed": True}])),
    body(report(pseudonym="Robert'); DROP TABLE participants;--")), body(report(pseudonym="x" * 31)),
    body(report(seat="x" * 41)), body(report(seat="a\nb")), body(report(seat="\u202eevil")), body(report(seat=7)),
    body(report(op="__import__('os').system('id')")), body(report(error="<img src=x>")),
    body(report(line="x" * 161)), b'{"v": 1, "pseudonym": NaN}', body(report(seat="x" * MAX_BODY)),
])
def test_anything_else_is_refused(bad):
    with pytest.raises(SchemaError):
        parse(bad, EXERCISES)


def test_culprit_lines_are_anonymised():
    assert anonymise_line("out += x  # Ada Lovelace's fix") == "out += x"
    assert anonymise_line("w.data -= lr * open('/home/ada/secret.txt').read()  # hm") == "w.data -= lr * open('…').read()"
    assert anonymise_line('h = f"{name}#1"; y += 1') == "h = f'…'; y += 1"


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


# --- the client: opt-in, what it sends, and never breaking check() -----------------------------------------
BROKEN_RESIDUAL = solution_code("residual_add").replace("out = out + x", "out += x")


@pytest.fixture
def broken_namespace(tmp_path):
    # From a real file, as a notebook cell is: the locator then has the culprit line's text.
    path = tmp_path / "answer.py"
    path.write_text(BROKEN_RESIDUAL)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


@pytest.fixture
def fresh_client(monkeypatch):
    monkeypatch.delenv(client.ENV, raising=False)
    monkeypatch.setattr(client, "_session", None)
    monkeypatch.setattr(client, "_left", False)
    monkeypatch.setattr(client, "_last", None)
    return client


def test_check_has_join_preview_and_leave_and_sends_nothing_unjoined(fresh_client, broken_namespace, capsys):
    from autograder import check

    result = check("residual_add", broken_namespace, quiet=True)
    assert result.status == "failed" and fresh_client._session is None
    data = check.preview()
    assert "nothing is sent now" in capsys.readouterr().out
    assert set(data) == {"v", "pseudonym", "seat", "exercise", "status", "checks", "error", "op"}
    assert data["op"] == "torch.Tensor.add_" and data["error"] == "RuntimeError"


def test_the_culprit_line_needs_a_second_opt_in_and_nothing_identifies_the_machine(fresh_client, broken_namespace):
    from autograder import check

    check.join("http://127.0.0.1:9/ABCDEF", seat="B12")  # port 9: nothing listens; join says so and goes on
    check("residual_add", broken_namespace, quiet=True)
    without = check.preview()
    check.join("http://127.0.0.1:9/ABCDEF", share_line=True)
    check("residual_add", broken_namespace, quiet=True)
    with_line = check.preview()
    check.leave()
    assert "line" not in without and with_line["line"] == "out += x"
    assert without["pseudonym"] != with_line["pseudonym"]  # a new pseudonym for each session
    sent = json.dumps([without, with_line])
    for private in {socket.gethostname(), os.environ.get("USER", "\0"), str(Path.home()), "answer.py"} - {""}:
        assert private not in sent
    assert parse(body(with_line), EXERCISES)  # what the client sends, the server accepts


def test_a_dead_or_silent_server_never_slows_a_check(fresh_client):
    from autograder import check

    namespace: dict = {}
    exec(solution_code("leaf_sgd"), namespace)  # a check of about 10 ms: any wait would show
    check("leaf_sgd", namespace, quiet=True)
    start = time.perf_counter()
    for _ in range(5):
        check("leaf_sgd", namespace, quiet=True)
    unjoined = (time.perf_counter() - start) / 5
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(0)  # never answers: the sender's 2 s timeout runs out, again and again
    try:
        check.join(f"http://127.0.0.1:{silent.getsockname()[1]}/ABCDEF")
        start = time.perf_counter()
        for _ in range(40):  # more than the queue holds: the rest are dropped, not waited for
            assert check("leaf_sgd", namespace, quiet=True).status == "passed"
        per_check = (time.perf_counter() - start) / 40
    finally:
        silent.close()
        client._session = None
    assert per_check < unjoined + 0.02, (per_check, unjoined)


def test_a_failing_client_never_raises_into_check(fresh_client, broken_namespace, monkeypatch):
    from autograder import check

    monkeypatch.setenv(client.ENV, "not a url")  # and a broken environment variable
    assert check("residual_add", broken_namespace, quiet=True).status == "failed"


# --- the real server --------------------------------------------------------------------------------------
class Server:
    def __init__(self, process: subprocess.Popen, out: Path, tmp: Path):
        self.process, self.out, self.tmp = process, out, tmp
        text = self.wait_for(r"Host: +http://127\.0\.0\.1:(\d+)/dashboard#token=(\S+)")
        self.port, self.host_token = int(text[0]), text[1]
        self.code = self.wait_for(r"Join code: +(\w+)")[0]
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

    def request(self, method: str, path: str, data: bytes | None = None, headers: dict | None = None,
                source: str = "127.0.0.2") -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10, source_address=(source, 0))
        try:
            conn.request(method, path, body=data, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.read()
        except (ConnectionError, http.client.RemoteDisconnected) as e:
            return 0, repr(e).encode()
        finally:
            conn.close()

    def post(self, data, source: str = "127.0.0.2", code: str | None = None, **headers) -> int:
        raw = data if isinstance(data, bytes) else body(data)
        headers = {"Content-Type": "application/json", **headers}
        return self.request("POST", f"/{code or self.code}/report", raw, headers, source)[0]

    def state(self, view: str = "projector", token: str | None = None, source: str = "127.0.0.2", **headers):
        headers["Authorization"] = f"Bearer {token or self.host_token}"
        status, raw = self.request("GET", f"/api/state?view={view}", headers=headers, source=source)
        return status, (json.loads(raw) if status == 200 else None)

    def database(self) -> bytes:
        (path,) = self.tmp.glob("autograder-workshop-*/workshop.sqlite")
        return b"".join(p.read_bytes() for p in path.parent.iterdir())

    def stop(self) -> str:
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=30)
        return self.out.read_text()


@contextmanager
def workshop_server(tmp_path: Path, *args: str):
    """`python -m autograder.workshop serve` on 127.0.0.1, its temporary files in tmp_path/tmp."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "server.log"
    with out.open("w") as log:
        process = subprocess.Popen([sys.executable, "-m", "autograder.workshop", "serve", "--host", "127.0.0.1",
                                    "--port", "0", "--no-qr", *args], stdout=log, stderr=subprocess.STDOUT,
                                   cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1"})
    try:
        yield Server(process, out, tmp)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_reports_in_state_out_and_nothing_left_behind(tmp_path):
    with workshop_server(tmp_path, "--stuck-attempts", "2", "--export", str(tmp_path / "export")) as server:
        assert server.request("GET", f"/{server.code}")[0] == 200
        assert server.request("GET", "/ZZZZZZ")[0] == 404  # a wrong join code
        attack = "<script>alert(1)</script>"
        assert server.post(report(seat=attack), source="127.0.0.3") == 204
        assert server.post(report(seat=attack), source="127.0.0.3") == 204
        assert server.post(report(pseudonym="brave-heron-34", status="passed", seat="A1",
                                  checks=[{"name": "forward", "passed": True}], op=None, line=None),
                           source="127.0.0.4") == 204
        status, data = server.state("helper")
        grid = {g["exercise"]: g for g in data["grid"]}
        assert status == 200 and data["participants"] == 2
        assert (grid["residual_add"]["passed"], grid["residual_add"]["failing"]) == (1, 1)
        assert grid["leaf_sgd"]["not_started"] == 2
        assert [p["seat"] for p in data["stuck_people"]] == [attack]
        assert data["top_ops"] == [{"op": "torch.Tensor.add_", "participants": 1}]
        _, projector = server.state("projector")
        assert "people" not in projector and "stuck_people" not in projector  # aggregates only
        assert projector["stuck"] == [{"exercise": "residual_add", "count": 1}]
        database = server.database()
        assert b"amber-otter-12" in database
        assert b"127.0.0.3" not in database and b"127.0.0.4" not in database
        folder = next(server.tmp.glob("autograder-workshop-*"))
        log = server.stop()
    assert not folder.exists(), "the log must be deleted at shutdown"
    assert "127.0.0.3" not in log and "127.0.0.4" not in log
    exported = {p.name: p for p in (tmp_path / "export").iterdir()}
    assert set(exported) == {"progress.csv", "failing_checks.csv", "culprit_ops.csv", "grid.png"}
    text = "".join(p.read_text() for name, p in exported.items() if name.endswith(".csv"))
    assert "residual_add,2,0,1,1," in text and "backward runs,2" in text
    assert "amber" not in text and "script" not in text and "out += x" not in text  # aggregates only


def test_tokens_rights_and_the_spotlight(tmp_path):
    with workshop_server(tmp_path) as server:
        assert server.post(report(), source="127.0.0.3") == 204
        assert server.state(token="wrong")[0] == 401
        assert server.request("GET", "/api/state")[0] == 401
        assert server.state(token=server.code)[0] == 401  # the join code is no token
        assert server.state("projector", token=server.helper_token)[0] == 200
        assert server.state("helper", token=server.helper_token)[0] == 200
        assert server.state("controls", token=server.helper_token)[0] == 403
        assert server.state("controls", **{"X-Forwarded-For": "203.0.113.9"})[0] == 403  # host token via a tunnel
        assert server.state("anything")[0] == 403
        _, data = server.state("controls")
        (line,) = data["lines"]
        assert line["line"] == "out += x" and "pseudonym" not in line and "seat" not in line

        def spotlight(line_id, token=None, **headers):
            headers = {"Authorization": f"Bearer {token or server.host_token}", "X-Workshop": "1", **headers}
            return server.request("POST", "/api/spotlight", body({"id": line_id}), headers)[0]

        assert spotlight(line["id"], token=server.helper_token) == 403
        assert spotlight(line["id"], **{"X-Workshop": ""}) == 400  # what a cross-site form would send
        assert spotlight("0" * 16) == 404 and spotlight("'; --") == 404 and spotlight(["x"]) == 404
        assert spotlight(line["id"]) == 204
        assert server.state(token=server.helper_token)[1]["spotlight"] == {
            "exercise": "residual_add", "op": "torch.Tensor.add_", "line": "out += x"}
        assert spotlight(None) == 204 and server.state()[1]["spotlight"] is None


def test_malformed_oversized_and_odd_requests_are_refused_and_the_server_goes_on(tmp_path):
    with workshop_server(tmp_path) as server:
        assert server.post(b"{not json") == 400
        assert server.post(b"[" * 5000) == 400
        assert server.post(report(), **{"Content-Type": "text/plain"}) == 415
        assert server.post(report(seat="x" * (MAX_BODY + 100))) in (400, 413)
        status = server.post(b"x" * (4 << 20))  # 4 MiB: refused before it is read
        assert status in (0, 400, 413)
        raw = socket.create_connection(("127.0.0.1", server.port), timeout=5, source_address=("127.0.0.5", 0))
        raw.sendall(b"\x16\x03\x01garbage\r\n\r\n")  # TLS hello to a plain HTTP port, and worse
        raw.recv(1024)
        raw.close()
        assert server.post(report(), code="WRONG1") == 404
        assert server.request("GET", "/../../etc/passwd")[0] == 404
        assert server.request("GET", "/static/..%2fserver.py")[0] == 404
        assert server.request("GET", "/static/dashboard.js")[0] == 200
        assert server.post(report()) == 204  # still serving
        log = server.stop()
    assert "127.0.0.2" not in log and "127.0.0.5" not in log


def test_a_flood_is_limited_per_address_and_per_pseudonym_and_the_room_is_capped(tmp_path):
    with workshop_server(tmp_path, "--max-participants", "20", "--address-rate", "5") as server:
        # one pseudonym: a burst of 10, then 0.5 per second
        same = [server.post(report(), source="127.0.0.3") for _ in range(15)]
        assert same.count(204) == 10 and same[10:] == [429] * 5
        # new pseudonyms, each from an address of its own: the room fills up, then newcomers are refused
        room = [server.post(report(pseudonym=f"brave-otter-{i:02d}"), source=f"127.0.1.{i}") for i in range(10, 40)]
        assert room == [204] * 19 + [403] * 11
        # one address, as fast as it can: after a burst of 20, refused (429) before anything is parsed
        flood = [server.post(b"{" if i % 2 else report(pseudonym=f"quick-wren-{i:02d}"), source="127.0.0.6")
                 for i in range(300)]
        assert flood.count(429) >= 250 and flood[-1] == 429
        # everyone else carries on
        assert server.post(report(pseudonym="brave-otter-10", status="passed"), source="127.0.0.7") == 204
        _, data = server.state(source="127.0.0.8")
        assert data["participants"] == 20
        log = server.stop()
    for source in ("127.0.0.3", "127.0.1.10", "127.0.0.6", "127.0.0.7", "127.0.0.8"):
        assert source not in log
