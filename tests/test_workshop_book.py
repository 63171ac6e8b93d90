"""book/reference/workshop.md, followed: every step marked `% follow:` on the page is run in order (the host's
commands with the console script, in a home folder of the test's; the participant's lines in this process,
against that server), and each output block shown after a step must appear in what it printed, in order,
with the page's example values (code, address, port, pseudonym, home folder, tokens) read as this run's."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder import check
from autograder.intake.cells import marker_line
from autograder.notebook import selfcheck
from autograder.reference_store import known_submissions
from autograder.workshop import client
from autograder.workshop.net import interface_addresses
from tests.conftest import ROOT

PAGE = ROOT / "book" / "reference" / "workshop.md"
AUTOGRADER = Path(sys.executable).parent / "autograder"
pytestmark = pytest.mark.slow


def steps(text: str) -> list[tuple[str, str, str | None]]:
    """(kind, code, the output shown after it) for each `% follow:` step of the page."""
    found = re.findall(r"^% follow: (\w+)\n```\w*\n(.*?)^```", text, re.M | re.S)
    out: list[tuple[str, str, str | None]] = []
    for kind, body in found:
        if kind == "output":
            assert out and out[-1][2] is None, "an output block follows a step"
            out[-1] = (*out[-1][:2], body)
        else:
            out.append((kind, body.strip(), None))
    return out


class Run:
    """This run's values for the page's examples."""

    def __init__(self, home: Path):
        self.home, self.code, self.port, self.address, self.pseudonym = home, None, None, None, r"[a-z]+-[a-z]+-\d+"

    def pattern(self, line: str) -> re.Pattern:
        line = re.escape(line.rstrip())
        subs = [("K7QM2X", self.code or "[A-Z0-9]{6}"), (r"192\.168\.1\.20", re.escape(self.address or "")),
                ("8765", str(self.port)), ("amber\\-otter\\-42", self.pseudonym),
                (re.escape("/home/ada"), re.escape(str(self.home))),
                (r"\(wlan0\)", r"\(.+\)"), (r"\d{8}\\-\d{6}", r"\d{8}-\d{6}(-\d+)?"),
                (r"[A-Za-z0-9]+\\\.\\\.\\\.", r"\S+"),
                ("20260314\\-113000", r"\d{8}-\d{6}(-\d+)?")]
        for example, real in subs:
            line = line.replace(example, real)
        line = re.sub(r"[A-Za-z0-9]{3}\\\.\\\.\\\.", r"\\S+", line)
        return re.compile(line)

    def shows(self, shown: str, printed: str) -> None:
        lines = printed.splitlines()
        at = 0
        for line in shown.splitlines():
            if not line.strip() or line.strip() == "…":
                continue
            wanted = self.pattern(line)
            while at < len(lines) and not wanted.fullmatch(lines[at].rstrip()):
                at += 1
            assert at < len(lines), f"the page shows {line!r}, which was not printed:\n{printed}"
            at += 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_workshop_page_followed(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "XDG_STATE_HOME"} | {"HOME": str(home), "PYTHONUNBUFFERED": "1"}
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "participant"))  # the participant's machine
    monkeypatch.delenv(client.ENV, raising=False)
    client._session, client._left, client._last = None, False, None
    answer = f"{marker_line(1, 1)}\n{known_submissions('residual_add').broken}"  # the answer cell: the bug, unchanged
    namespace: dict = {"check": check}
    exec(answer, namespace)
    kernel = SimpleNamespace(user_ns=namespace, history_manager=SimpleNamespace(input_hist_raw=[answer]))
    monkeypatch.setattr(selfcheck, "_shell", lambda: kernel)
    run = Run(home)
    port = free_port()
    extra = f" --port {port}" + ("" if interface_addresses() else " --host 127.0.0.1")
    server = None
    try:
        for kind, code, shown in steps(PAGE.read_text()):
            if kind in ("shell", "restart") and code.startswith("autograder workshop serve"):
                if kind == "restart":
                    server.send_signal(signal.SIGINT)
                    server.wait(timeout=60)
                out = tmp_path / f"{kind}.log"
                command = (code.replace("autograder", str(AUTOGRADER), 1) + (extra if kind == "shell" else "")
                           + " --no-qr")
                server = subprocess.Popen(["bash", "-c", command], stdout=out.open("w"), stderr=subprocess.STDOUT,
                                          env=env, cwd=tmp_path, start_new_session=True)
                deadline = time.monotonic() + 60
                while "Participants join" not in out.read_text() and "so far" not in out.read_text():
                    assert server.poll() is None and time.monotonic() < deadline, out.read_text()
                    time.sleep(0.1)
                time.sleep(0.3)
                printed = out.read_text()
                url = re.search(r"^  (http://\S+/([A-Z0-9]{6}))", printed, re.M)
                if url:
                    run.code, run.port = url.group(2), port
                    run.address = re.match(r"http://([\d.]+):", url.group(1)).group(1)
            elif kind == "shell":
                server.send_signal(signal.SIGINT)
                server.wait(timeout=60)
                command = code.replace("autograder", str(AUTOGRADER), 1)
                printed = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env,
                                         cwd=tmp_path, timeout=120).stdout
            else:
                code = code.replace("http://192.168.1.20:8765", f"http://{run.address}:{run.port}")
                code = code.replace("K7QM2X", run.code)
                buffer = io.StringIO()
                with contextlib.redirect_stdout(buffer):
                    try:
                        exec(code, namespace)
                    except Exception as e:  # noqa: BLE001 - what a notebook shows of it
                        print(f"{type(e).__name__}: {e}")
                printed = buffer.getvalue()
                if client._session is not None:
                    run.pseudonym = re.escape(client._session.pseudonym)
            if shown is not None:
                run.shows(shown, printed)
    finally:
        if server is not None and server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
        if client._heartbeat is not None:
            client._heartbeat.stop()
        client._session, client._left, client._last, client._heartbeat = None, False, None, None
    exports = sorted((home / "workshop-exports").iterdir())  # at each of the two stops, and `end`'s: none lost
    assert len(exports) == 3 and all((e / "misconceptions.csv").exists() for e in exports)
    assert "the bug, unchanged" in (exports[-1] / "misconceptions.csv").read_text()
    assert not (home / ".local" / "state" / "autograder-workshop" / "room.sqlite").exists()
