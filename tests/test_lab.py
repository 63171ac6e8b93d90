"""The README's one command for learners, `scripts/lab`, starts JupyterLab on exercises/ with the course's own
Python: the server answers, lists the exercise notebooks at its root, and offers the course's kernel."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

from autograder.exercises import EXERCISES
from tests.conftest import ROOT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_scripts_lab_opens_the_exercises_in_jupyterlab(tmp_path):
    port, token = _free_port(), "course-test-token"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg")}
    lab = subprocess.Popen([str(ROOT / "scripts" / "lab"), "--no-browser", f"--port={port}", "--ip=127.0.0.1",
                            f"--IdentityProvider.token={token}"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, start_new_session=True)
    try:
        contents = None
        for _ in range(120):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents?token={token}", timeout=5) as r:
                    contents = json.load(r)
                break
            except OSError:
                assert lab.poll() is None, lab.stdout.read().decode()[-3000:]
                time.sleep(0.5)
        assert contents is not None, "JupyterLab did not answer within a minute"
        names = {item["name"] for item in contents["content"]}
        assert len([n for n in names if n.endswith(".ipynb")]) == len(EXERCISES)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=10) as r:
            assert r.status == 200 and b"JupyterLab" in r.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/kernelspecs?token={token}", timeout=10) as r:
            specs = json.load(r)["kernelspecs"]
        assert "python3" in specs  # scripts/install's kernel, in the course's environment
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        lab.wait(timeout=30)
