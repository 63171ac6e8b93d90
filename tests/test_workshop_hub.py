"""`autograder workshop serve --hub` under a real JupyterHub on 127.0.0.1 (DummyAuthenticator, local process
spawner, npm's configurable-http-proxy): a user's kernel, started by the user's own single-user server,
reports with no join step (the hub's configuration sets AUTOGRADER_WORKSHOP; the server's API token says
who it is); the dashboard answers members of the hosts' group only, and logs one in through the hub."""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from autograder.intake.cells import marker_line
from tests.browser import CHROMIUM, open_browser
from tests.conftest import solution_code

pytestmark = pytest.mark.slow
ADMIN = "test-admin-token-" + os.urandom(8).hex()
BIN = Path(sys.executable).parent


def _missing() -> str | None:
    try:
        import jupyter_server  # noqa: F401 - the single-user server
        import jupyterhub  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed (pip install -e '.[dev]')"
    if shutil.which("configurable-http-proxy") is None:
        return "npm's configurable-http-proxy is not on PATH (scripts/system-packages installs it as root)"
    if not (BIN / "jupyterhub-singleuser").exists():
        return f"no jupyterhub-singleuser beside {sys.executable}"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CONFIG = """
c = get_config()  # noqa: F821
c.JupyterHub.ip, c.JupyterHub.port = "127.0.0.1", {port}
c.JupyterHub.hub_ip, c.JupyterHub.hub_port = "127.0.0.1", {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api}"
c.ConfigurableHTTPProxy.pid_file = "{tmp}/proxy.pid"
c.JupyterHub.db_url = "sqlite:///{tmp}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{tmp}/cookie_secret"
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = "workshop"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.Spawner.cmd = ["{bin}/jupyterhub-singleuser"]
c.Spawner.args = ["--allow-root"]  # this test runs as root in CI
# --- what the book tells a hub's admin to add -----------------------------------------------------------
c.Spawner.environment = {{"AUTOGRADER_WORKSHOP": "http://127.0.0.1:{port}/services/workshop",
                         "JUPYTER_RUNTIME_DIR": "{tmp}/runtime"}}
c.Spawner.server_token_scopes = ["users:activity!user", "access:servers!server", "access:services!service=workshop"]
c.JupyterHub.load_groups = {{"workshop-hosts": {{"users": ["host"]}}}}
c.JupyterHub.load_roles = [
    {{"name": "user", "scopes": ["self", "access:services!service=workshop"]}},
    {{"name": "test-admin", "scopes": ["admin:users", "admin:servers", "tokens", "read:users"], "services": ["test"]}},
]
c.JupyterHub.services = [
    {{"name": "workshop", "url": "http://127.0.0.1:{service_port}", "oauth_no_confirm": True,
      "command": ["{python}", "-m", "autograder.workshop", "serve", "--hub", "--no-qr", \
"--state", "{tmp}/room.sqlite"]}},
    {{"name": "test", "api_token": "{admin}"}},
]
"""


class Hub:
    def __init__(self, tmp: Path):
        self.tmp, self.port = tmp, free_port()
        (tmp / "jupyterhub_config.py").write_text(CONFIG.format(
            port=self.port, hub_port=free_port(), proxy_api=free_port(), service_port=free_port(), tmp=tmp,
            bin=BIN, python=sys.executable, admin=ADMIN))
        self.log = tmp / "hub.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen([str(BIN / "jupyterhub"), "-f", "jupyterhub_config.py"], cwd=tmp,
                                            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, data=None, token: str = ADMIN) -> tuple[int, object]:
        request = urllib.request.Request(self.url + path, method=method,
                                         data=None if data is None else json.dumps(data).encode(),
                                         headers={"Authorization": f"token {token}",
                                                  "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            return e.code, None
        except (urllib.error.URLError, ConnectionError):
            return 0, None

    def wait(self, what, timeout: float = 60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()[-3000:]
            found = what()
            if found:
                return found
            time.sleep(0.3)
        raise AssertionError(f"timed out; hub log:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # whatever the hub started and left behind
        except ProcessLookupError:
            pass


def run_in_kernel(connection_file: str, cells: list[str]) -> list[str]:
    from jupyter_client import BlockingKernelClient

    kernel = BlockingKernelClient(connection_file=connection_file)
    kernel.load_connection_file()
    kernel.start_channels()
    try:
        kernel.wait_for_ready(timeout=60)
        outputs = []
        for code in cells:
            seen: list[str] = []

            def hook(message, seen=seen):
                seen.append(message["content"].get("text") or message["content"].get("evalue") or "")

            reply = kernel.execute_interactive(code, timeout=120, output_hook=hook)
            assert reply["content"]["status"] == "ok", (code, seen)
            outputs.append("".join(seen))
        return outputs
    finally:
        kernel.stop_channels()


@pytest.fixture
def hub(tmp_path):
    reason = _missing()
    if reason:
        pytest.skip(reason)
    hub = Hub(tmp_path)
    try:
        yield hub
    finally:
        hub.stop()


def test_a_hub_user_reports_with_no_join_step_and_only_hosts_see_the_room(hub):
    hub.wait(lambda: hub.request("GET", "/services/workshop/api/state")[0] == 403)  # up, and closed
    assert hub.request("POST", "/hub/api/users/ada")[0] == 201
    assert hub.request("POST", "/hub/api/users/ada/server")[0] in (201, 202)
    hub.wait(lambda: (hub.request("GET", "/hub/api/users/ada")[1] or {}).get("servers", {}).get("", {}).get("ready"))
    _, ada = hub.request("POST", "/hub/api/users/ada/tokens", {"note": "the test, as ada"})
    _, kernel = hub.request("POST", "/user/ada/api/kernels", {"name": "python3"}, token=ada["token"])
    connection = hub.wait(lambda: glob.glob(str(hub.tmp / "runtime" / f"kernel-{kernel['id']}.json")))[0]

    broken = solution_code("residual_add").replace("out = out + x", "out += x")
    out = run_in_kernel(connection, [
        "from autograder import check", f"{marker_line(1, 1)}\n{solution_code('leaf_sgd')}",
        'check("leaf_sgd")\nassert check.last.result.status == "passed"',
        f"{marker_line(1, 1)}\n{broken}", 'check("residual_add")\nassert check.last.result.status == "failed"'])
    assert "Reporting to the workshop at" in out[2] and "Workshop: report received" in out[4]

    _, host = hub.request("POST", "/hub/api/users/host/tokens", {"note": "the test, as the host"})
    status, room = hub.request("GET", "/services/workshop/api/state?view=helper", token=host["token"])
    assert status == 200 and room["participants"] == 1
    (person,) = room["people"]
    assert person["seat"] == "ada" and person["cells"] == {"leaf_sgd": "passed", "residual_add": "failing"}
    assert [m["label"] for m in room["misconceptions"]] == ["the bug, unchanged"]
    assert hub.request("GET", "/services/workshop/api/state", token=ada["token"])[0] == 403  # not a host
    report = {"v": 2, "pseudonym": "amber-otter-12", "exercise": "leaf_sgd", "status": "passed", "checks": []}
    assert hub.request("POST", "/services/workshop/report", report, token="forged")[0] == 403
    assert hub.request("POST", "/services/workshop/report", report, token="")[0] in (401, 403)

    if CHROMIUM.exists():  # the host logs in through the hub and sees the room
        with open_browser() as browser:
            page = browser.new_page()
            page.goto(hub.url + "/services/workshop/dashboard")
            page.fill("input[name=username]", "host")
            page.fill("input[name=password]", "workshop")
            page.click("[type=submit]")
            page.wait_for_url("**/services/workshop/dashboard**")
            page.wait_for_selector("#grid tbody tr")
            deadline = time.monotonic() + 10
            while page.text_content("#participants") != "1 here":
                assert time.monotonic() < deadline, page.text_content("#participants")
                time.sleep(0.2)
            page.goto(hub.url + "/hub/logout")
