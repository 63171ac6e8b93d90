"""The workshop end to end, as a room uses it: `autograder workshop serve` (the real command line), a real
Jupyter kernel whose notebook joins and runs `check()` on the solution's and a broken answer, and the host's
dashboard in headless Chromium, filling as they pass, listing the one who keeps failing, showing a seat
label that holds markup as text, and putting the chosen culprit line in the spotlight.

Its screenshot of the dashboard is the one in the book (book/_static/workshop_dashboard.png): run with
WORKSHOP_SCREENSHOT=1 to refresh it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import nbformat
import pytest
from nbclient import NotebookClient

from tests.browser import CHROMIUM, open_browser
from tests.conftest import ROOT, solution_code
from tests.test_workshop import Server, report

SCRIPT_SEAT = "<script>window.__pwned=1</script>"
IMG_SEAT = "<img src=x onerror=window.__pwned=2>"
SCREENSHOT = ROOT / "book" / "_static" / "workshop_dashboard.png"

pytestmark = pytest.mark.slow


def notebook(url: str) -> nbformat.NotebookNode:
    broken = solution_code("residual_add").replace("out = out + x", "out += x")
    cells = [
        "from autograder import check",
        solution_code("residual_add"),
        f'check.join({url!r}, seat="A1")\nassert check("residual_add").status == "passed"',
        solution_code("leaf_sgd"),
        'assert check("leaf_sgd").status == "passed"\ncheck.leave()',
        f"check.join({url!r}, seat={SCRIPT_SEAT!r}, share_line=True)",
        broken,
        'for _ in range(3):\n    assert check("residual_add", quiet=True).status == "failed"\n'
        'sent = check.preview()\ncheck.leave()',
        f'check.join({url!r}, seat={IMG_SEAT!r})\nassert check("leaf_sgd").status == "passed"\ncheck.leave()',
    ]
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])


@pytest.fixture
def cli_server(tmp_path):
    (tmp_path / "tmp").mkdir()
    out = tmp_path / "server.log"
    with out.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "autograder", "workshop", "serve", "--host", "127.0.0.1", "--port", "0",
             "--stuck-attempts", "3"], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
            env={**os.environ, "TMPDIR": str(tmp_path / "tmp"), "PYTHONUNBUFFERED": "1"})
    try:
        yield Server(process, out, tmp_path / "tmp")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def simulated_room(server: Server) -> None:
    """Two dozen more participants, for a screenshot that looks like a room (plain HTTP, as the client posts)."""
    checks = [{"name": "forward", "passed": True}, {"name": "backward runs", "passed": False}]
    for i in range(24):
        who = {"pseudonym": f"calm-heron-{i + 10}", "seat": f"{'ABCD'[i % 4]}{i // 4 + 1}"}
        source = f"127.0.2.{i + 1}"
        server.post(report(**who, status="passed", checks=[{"name": "forward", "passed": True}], op=None, line=None),
                    source=source)
        if i % 3 == 0:
            server.post(report(**who, exercise="inplace_dropout", op="torch.nn.functional.dropout", line=None,
                               checks=checks), source=source)
        elif i % 3 == 1:
            server.post(report(**who, exercise="inplace_dropout", status="passed", op=None, line=None,
                               error=None, checks=[{"name": "dropout", "passed": True}]), source=source)


def wait_until(page, expression: str, timeout: float = 15) -> None:
    """Polls `expression` with page.evaluate (over DevTools, which the page's CSP allows; Playwright's
    wait_for_function evaluates a string inside the page, which the CSP forbids)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"not true after {timeout} s: {expression}"
        time.sleep(0.1)


def test_the_room_live(cli_server, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium); CI installs it")
    server = cli_server
    join_url = server.wait_for(r"Participants: +(\S+)")[0]
    assert join_url.endswith("/" + server.code) and "▀" in server.out.read_text()  # and a QR code
    host_url = f"http://127.0.0.1:{server.port}/dashboard#token={server.host_token}"
    problems: list[str] = []
    with open_browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(host_url)
        wait_until(page, "document.getElementById('participants').textContent === '0 participants'")

        nb = notebook(join_url)
        NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
        assert "Joined the workshop" in nb.cells[2].outputs[0]["text"]

        # The grid fills as they pass, by itself (the page polls every two seconds).
        cell = "document.querySelector('#grid tr[data-exercise=\"{}\"] .n-{}').textContent"
        wait_until(page, f"{cell.format('residual_add', 'passed')} === '1' && "
                         f"{cell.format('leaf_sgd', 'passed')} === '2'")
        assert page.text_content("#participants") == "3 participants"
        assert page.evaluate(cell.format("residual_add", "failing")) == "1"
        assert page.text_content("#stuck") == "residual_add: 1 stuck"
        assert "torch.Tensor.add_" in page.text_content("#top-ops")
        assert page.is_hidden("#helper") and SCRIPT_SEAT not in page.content()  # the projector: aggregates

        # The helpers' view: who is stuck, by seat label, shown as text.
        page.evaluate(f"location.hash = 'view=helper&token={server.host_token}'")
        page.wait_for_selector("#stuck-people tbody tr")
        assert page.text_content("#stuck-people tbody tr td") == SCRIPT_SEAT
        seats = page.eval_on_selector_all("#people tbody tr td:first-child", "tds => tds.map(t => t.textContent)")
        assert sorted(seats) == sorted(["A1", SCRIPT_SEAT, IMG_SEAT])
        assert page.evaluate("window.__pwned") is None
        assert page.evaluate("document.querySelectorAll('main script, main img').length") == 0

        # The host puts the shared culprit line in the spotlight; the projector shows it.
        simulated_room(server)
        page.evaluate(f"location.hash = 'view=controls&token={server.host_token}'")
        button = page.wait_for_selector("#lines tbody tr:has-text('out += x') button")
        button.click()
        page.evaluate(f"location.hash = 'token={server.host_token}'")
        wait_until(page, "!document.getElementById('spotlight').hidden")
        assert page.text_content("#spotlight-line") == "out += x"
        wait_until(page, "document.getElementById('participants').textContent === '27 participants'")
        shot = tmp_path / "workshop_dashboard.png"
        page.screenshot(path=str(shot), full_page=True)
        if os.environ.get("WORKSHOP_SCREENSHOT") == "1":
            SCREENSHOT.parent.mkdir(exist_ok=True)
            shutil.copyfile(shot, SCREENSHOT)
    assert not problems, problems
    assert page is not None and SCREENSHOT.exists(), "the book's screenshot: run once with WORKSHOP_SCREENSHOT=1"
    start = time.monotonic()
    log = server.stop()
    assert time.monotonic() - start < 10 and "log (" in log and "is deleted" in log
