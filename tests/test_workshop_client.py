"""The participant's client in this process, against the real server: opt-in, loud when it cannot join, one
person across kernels (its identity kept on the machine), one status line per check, a time limit and a
dead kernel reported, and never breaking or slowing a check."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import check
from autograder.notebook import selfcheck
from autograder.workshop import client, identity
from autograder.workshop.schema import parse
from tests.conftest import solution_code
from tests.test_workshop import COURSE, EXERCISES, workshop_server

BROKEN_RESIDUAL = solution_code("residual_add").replace("out = out + x", "out += x")


@pytest.fixture
def broken_namespace(tmp_path):
    # From a real file, as a notebook cell is: the locator then has the culprit line's text.
    path = tmp_path / "answer.py"
    path.write_text(BROKEN_RESIDUAL)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def new_kernel() -> None:
    """What a fresh kernel has of the client: nothing in memory (the machine's files stay)."""
    if client._heartbeat is not None:
        client._heartbeat.stop()
    client._session, client._left, client._last, client._heartbeat = None, False, None, None
    client._sender = None


@pytest.fixture
def fresh_client(monkeypatch, tmp_path):
    monkeypatch.delenv(client.ENV, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "machine"))
    new_kernel()
    yield client
    new_kernel()


def test_unjoined_check_sends_nothing_and_preview_says_so(fresh_client, broken_namespace, capsys):
    assert checked("residual_add", broken_namespace).status == "failed" and client._session is None
    check.preview()
    out = capsys.readouterr().out
    assert "nothing is sent now" in out and '"op": "torch.Tensor.add_"' in out and "Workshop:" not in out


def test_a_failed_join_is_loud_and_joins_nothing(fresh_client, tmp_path):
    with pytest.raises(client.JoinError, match="Cannot reach the workshop server at 127.0.0.1:9"):
        check.join("http://127.0.0.1:9/ABCDEF")
    with workshop_server(tmp_path) as server:
        with pytest.raises(client.JoinError, match=r"No workshop with the code 'WRONG1' .*Check the code"):
            check.join(f"http://127.0.0.1:{server.port}/WRONG1")
        assert client._session is None and server.state()[1]["participants"] == 0
    with pytest.raises(ValueError, match="not a workshop URL"):
        check.join("ftp://example.org/ABCDEF")


def checked(exercise_id, namespace):
    """check() on a notebook's names (no answer cell run), as the workshop's client sees it; its result."""
    check(exercise_id, namespace=namespace, history=[])
    return check.last.result


def test_one_person_across_kernels_and_one_status_line_per_check(fresh_client, broken_namespace, tmp_path, capsys):
    with workshop_server(tmp_path, "--stuck-minutes", "0") as server:
        check.join(server.url, seat="B12")
        first = client._session.pseudonym
        checked("residual_add", broken_namespace)
        out = capsys.readouterr().out
        assert f"Joined the workshop at 127.0.0.1:{server.port} as {first}" in out
        assert out.strip().endswith(f"Workshop: report received ({first}).")
        new_kernel()  # a kernel restart, or another notebook on this machine
        check.join(server.url)
        assert client._session.pseudonym == first and "the same participant as before" in capsys.readouterr().out
        _, data = server.state("helper")
        assert data["participants"] == 1 and data["people"][0]["seat"] == "B12"  # the seat kept
        # a hint from the host shows in the next check
        assert server.host("hint", {"text": "Look at the op the locator names"}) == 204
        checked("residual_add", broken_namespace)
        assert "Workshop hint from the host: Look at the op the locator names" in capsys.readouterr().out
        check.stuck()
        assert "note is up" in capsys.readouterr().out and server.state("helper")[1]["notes"][0]["seat"] == "B12"
        check.leave()
        assert server.state()[1]["participants"] == 0


def test_the_culprit_line_and_the_feedback_need_their_own_opt_in(fresh_client, broken_namespace, tmp_path):
    with workshop_server(tmp_path, "--stuck-attempts", "1", "--stuck-minutes", "0") as server:
        check.join(server.url)
        checked("residual_add", broken_namespace)
        without = client.payload(*client._last, client._session)
        check.join(server.url, share_line=True, share_feedback=True)
        checked("residual_add", broken_namespace)
        with_both = client.payload(*client._last, client._session)
        _, data = server.state("helper")
    assert "line" not in without and "feedback" not in without
    assert with_both["line"] == "out += x" and "[FAIL] backward runs" in with_both["feedback"]
    sent = json.dumps([without, with_both])
    for private in {socket.gethostname(), os.environ.get("USER", "\0"), str(Path.home()), "answer.py"} - {""}:
        assert private not in sent
    assert parse(json.dumps({**with_both, "secret": "s" * 32}).encode(), EXERCISES, COURSE.checks)
    (stuck,) = data["stuck_people"]
    assert "[FAIL] backward runs" in stuck["feedback"]  # helpers see what the participant chose to share


def test_a_time_limit_and_a_dead_kernel_are_reported(fresh_client, tmp_path, monkeypatch, capsys):
    with workshop_server(tmp_path) as server:
        check.join(server.url)
        loop = solution_code("residual_add").replace("out = out + x", "while True:\n            pass")
        namespace: dict = {}
        exec(loop, namespace)
        monkeypatch.setattr(selfcheck, "TIME_LIMIT", 0.5)
        start = time.monotonic()
        assert checked("residual_add", namespace).status == "timed_out"  # as the grader says of a loop
        assert time.monotonic() - start < 60  # stopped by the limit: only a loop left running fails this
        out = capsys.readouterr().out
        assert "did not finish within the time limit" in out and "Workshop: report received" in out
        # a kernel that dies in a check leaves its marker; the next join on this machine reports it
        dead = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        identity._write(identity._marker(client._session.room, dead.pid), {"exercise": "rnn_hidden", "t": 0})
        dead.send_signal(signal.SIGKILL)
        dead.wait()
        new_kernel()
        check.join(server.url)
        assert "Your last kernel died during check('rnn_hidden')" in capsys.readouterr().out
        _, data = server.state("helper")
    (person,) = data["people"]
    assert person["cells"] == {"residual_add": "timed out", "rnn_hidden": "kernel died"}


def test_a_silent_server_never_slows_a_check_and_each_check_says_so(fresh_client, tmp_path, capsys):
    namespace: dict = {}
    exec(solution_code("leaf_sgd"), namespace)  # a check of about 10 ms: any wait would show
    checked("leaf_sgd", namespace)
    start = time.perf_counter()
    for _ in range(5):
        checked("leaf_sgd", namespace)
    unjoined = (time.perf_counter() - start) / 5
    with workshop_server(tmp_path) as server:
        check.join(server.url)
        server.process.send_signal(signal.SIGSTOP)  # alive, listening, silent: every post times out
        try:
            capsys.readouterr()
            start = time.perf_counter()
            assert checked("leaf_sgd", namespace).status == "passed"
            first = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(40):  # more than the queue holds: dropped and said so, never waited for
                assert checked("leaf_sgd", namespace).status == "passed"
            per_check = (time.perf_counter() - start) / 40
        finally:
            server.process.send_signal(signal.SIGCONT)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Workshop:")]
    assert len(lines) == 41 and "not confirmed" in lines[0] and all("NOT received" in line for line in lines[2:])
    assert first < unjoined + client.WAIT + 0.3, (first, unjoined)
    assert per_check < 2 * unjoined + 0.03, (per_check, unjoined)  # no wait: only the load of a shared machine


def test_a_failing_client_never_raises_into_check(fresh_client, broken_namespace, monkeypatch, capsys):
    monkeypatch.setenv(client.ENV, "not a url")  # and a broken environment variable
    assert checked("residual_add", broken_namespace).status == "failed"
    monkeypatch.setenv(client.ENV, "http://127.0.0.1:9/ABCDEF")
    new_kernel()
    assert checked("residual_add", broken_namespace).status == "failed"
    assert "(Not reporting to the workshop: Cannot reach" in capsys.readouterr().out


def test_checks_made_while_the_server_restarts_arrive_in_order_once_and_each_line_says_so(
        fresh_client, broken_namespace, tmp_path, monkeypatch, capsys):
    # issue 33: nothing a participant does is lost (sender.py keeps what was not received and sends it again)
    from autograder.workshop import sender
    from tests.test_workshop import start

    monkeypatch.setattr(sender, "RETRY", 0.3)
    first = start(tmp_path, "--port", "0", "--stuck-attempts", "2", "--stuck-minutes", "0")
    check.join(first.url, seat="D4")
    name = client._session.pseudonym
    checked("residual_add", broken_namespace)
    first.stop()
    checked("residual_add", broken_namespace)
    namespace: dict = {}
    exec(solution_code("leaf_sgd"), namespace)
    checked("leaf_sgd", namespace)
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("Workshop:")]
    assert lines[0] == f"Workshop: report received ({name})."
    assert all(line.startswith("Workshop: report NOT received yet") and "kept on this computer" in line
               for line in lines[1:]) and len(lines) == 3
    second = start(tmp_path, "--port", str(first.port), "--stuck-attempts", "2", "--stuck-minutes", "0",
                   state=first.state_file, name="second")
    try:
        assert client._sender.drained(10)
        checked("residual_add", broken_namespace)
        line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("Workshop:")][-1]
        assert line == (f"Workshop: report received ({name}), after the 2 kept while the server did not answer, "
                        "in order.")
        _, data = second.state("helper")
    finally:
        second.stop()
    (person,) = data["people"]
    assert person["cells"] == {"residual_add": "failing", "leaf_sgd": "passed"}
    assert [(p["seat"], p["failures"]) for p in data["stuck_people"]] == [("D4", 3)]
