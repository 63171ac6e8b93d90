"""A room of real Jupyter kernels, as the book's workshop plan runs one: `autograder workshop serve` (the real
command line) for two exercises; three people on three machines (a state folder each), one of them with two
notebooks open and a kernel restart, one whose kernel dies in a check and one whose answer loops, a late
joiner; mistyped codes and an unreachable host; and the server restarted in the middle.

It asserts what the host would count on: the head count (three people, however many kernels), the join
failure messages, the room kept across the restart (same code, nobody joins again), the misconception labels,
and a dead kernel and a time limit shown as such."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jupyter_client import KernelManager

from autograder.intake.cells import marker_line
from autograder.reference_store import known_submissions
from tests.conftest import ROOT, solution_code
from tests.test_workshop import Server

pytestmark = pytest.mark.slow
NO_GRAD = known_submissions("residual_add").wrong["no_grad around +="][0]
DIES = solution_code("residual_add").replace("out = out + x", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
LOOPS = solution_code("residual_add").replace("out = out + x", "while True:\n            pass")


class Kernel:
    """A real kernel on a participant's machine (its own XDG_STATE_HOME), run cell by cell."""

    def __init__(self, machine: Path):
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=str(ROOT), env={**os.environ, "XDG_STATE_HOME": str(machine)})
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)

    def run(self, code: str) -> str:
        seen: list[str] = []

        def hook(message):
            content = message["content"]
            seen.append(content.get("text") or "".join(content.get("data", {}).get("text/plain", "")))

        reply = self.client.execute_interactive(code, timeout=120, output_hook=hook)
        assert reply["content"]["status"] == "ok", (code, seen, reply["content"].get("evalue"))
        return "".join(seen)

    def check(self, answer: str, exercise: str) -> str:
        """The answer typed into the exercise's answer cell and run, then check() in a cell of its own."""
        self.run(f"{marker_line(1, 1)}\n{answer}")
        return self.run(f'check("{exercise}")')

    def run_until_it_dies(self, code: str) -> None:
        self.client.execute(code)
        deadline = time.monotonic() + 60
        while self.manager.is_alive():
            assert time.monotonic() < deadline, "the kernel did not die"
            time.sleep(0.2)

    def restart(self) -> None:
        self.manager.restart_kernel(now=True)
        self.client.wait_for_ready(timeout=120)

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def serve(tmp_path: Path, state: Path, port: int, name: str) -> Server:
    out = tmp_path / f"{name}.log"
    with out.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "autograder", "workshop", "serve", "--host", "127.0.0.1", "--port", str(port),
             "--state", str(state), "--exercises", "residual_add,rnn_hidden"], stdout=log,
            stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    return Server(process, out, state)


def test_a_room_of_real_kernels_across_notebooks_restarts_and_a_server_restart(tmp_path):
    state = tmp_path / "host" / "room.sqlite"
    server = serve(tmp_path, state, 0, "first")
    kernels: list[Kernel] = []
    try:
        url, port = server.url, server.port
        server.wait_for("(▀)")  # the QR code, printed after the join URL (segno's import may lag under load) ...
        assert server.out.read_text().index(server.helper_token) < server.out.read_text().index("▀")  # ... not above it

        ada_residual = Kernel(tmp_path / "ada")  # Ada's first notebook
        kernels.append(ada_residual)
        ada_residual.run("from autograder import check")
        wrong_code = ada_residual.run(f'try:\n    check.join("{url[:-6]}WRONG1")\nexcept Exception as e:\n    print(e)')
        assert "No workshop with the code 'WRONG1'" in wrong_code and "Check the code on the projector" in wrong_code
        unreachable = ada_residual.run('try:\n    check.join("http://127.0.0.1:9/ABCDEF")\nexcept Exception as e:\n'
                                       '    print(e)')
        assert "Cannot reach the workshop server at 127.0.0.1:9" in unreachable
        assert server.state()[1]["participants"] == 0  # failed joins join nobody
        joined = ada_residual.run(f'check.join("{url}", seat="A1")')
        ada = re.search(r"as ([a-z]+-[a-z]+-\d+)", joined).group(1)
        out = ada_residual.check(NO_GRAD, "residual_add")
        assert out.strip().endswith(f"Workshop: report received ({ada}).")

        ada_rnn = Kernel(tmp_path / "ada")  # Ada's second notebook, on the same machine
        kernels.append(ada_rnn)
        assert "the same participant as before" in ada_rnn.run(f'from autograder import check\ncheck.join("{url}")')
        assert "report received" in ada_rnn.check(solution_code("rnn_hidden"), "rnn_hidden")

        bob = Kernel(tmp_path / "bob")
        kernels.append(bob)
        bob.run(f'from autograder import check\ncheck.join("{url}", seat="B1")')
        broken = known_submissions("residual_add").broken
        bob.check(broken, "residual_add")
        assert bob.run('for _ in range(2):\n    check("residual_add")').count("received") == 2

        # the server restarts (its terminal closed, say): the same room, on the same port
        assert "kept in" in server.stop(signal.SIGHUP)
        server = serve(tmp_path, state, port, "second")
        assert server.code == url[-6:] and "resumed (2 participants so far)" in server.out.read_text()

        ada_residual.restart()  # nobody joins again but the restarted kernel, and it is Ada again
        again = ada_residual.run(f'from autograder import check\ncheck.join("{url}")')
        assert f"as {ada}" in again and "the same participant as before" in again
        assert "report received" in ada_residual.check(solution_code("residual_add"), "residual_add")

        bob.run(f"{marker_line(1, 1)}\n{DIES}")
        bob.run_until_it_dies('check("residual_add")')
        bob.restart()
        back = bob.run(f'from autograder import check\ncheck.join("{url}")')
        assert "Your last kernel died during check('residual_add')" in back
        cells = {p["seat"]: p["cells"] for p in server.state("helper")[1]["people"]}
        assert cells["B1"] == {"residual_add": "kernel died"}
        bob.run(f"{marker_line(1, 1)}\n{LOOPS}")
        looped = bob.run('check("residual_add", timeout=1)')
        assert "did not finish within the time limit" in looped and "report received" in looped

        cyd = Kernel(tmp_path / "cyd")  # a late joiner
        kernels.append(cyd)
        cyd.run(f'from autograder import check\ncheck.join("{url}", seat="C1")')
        assert "report received" in cyd.check(NO_GRAD, "residual_add")

        _, room = server.state("helper")
        assert (room["participants"], room["gone"]) == (3, 0)  # three people, six kernels
        cells = {p["seat"]: p["cells"] for p in room["people"]}
        assert cells == {"A1": {"residual_add": "passed", "rnn_hidden": "passed"}, "B1": {"residual_add": "timed out"},
                         "C1": {"residual_add": "failing"}}
        grid = {g["exercise"]: g for g in room["grid"]}
        assert (grid["residual_add"]["passed"], grid["residual_add"]["failing"]) == (1, 2)
        assert [(m["label"], m["participants"]) for m in room["misconceptions"]] == [("no_grad around +=", 1)]
        log = server.stop()
        assert "kept in" in log
    finally:
        for kernel in kernels:
            kernel.close()
        if server.process.poll() is None:
            server.process.kill()
    # the whole workshop's misconceptions, in the export `end` writes before deleting the room
    ended = subprocess.run([sys.executable, "-m", "autograder", "workshop", "end", "--state", str(state),
                            "--export", str(tmp_path / "export")], capture_output=True, text=True, cwd=ROOT)
    assert ended.returncode == 0, ended.stderr
    (folder,) = (tmp_path / "export").iterdir()
    text = (folder / "misconceptions.csv").read_text()
    assert "residual_add,no_grad around +=,2,2" in text and "residual_add,\"the bug, unchanged\",3,1" in text
    assert not state.exists()
