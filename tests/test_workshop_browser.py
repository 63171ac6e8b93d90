"""The dashboard in headless Chromium, as a host runs a room with it: the projector at 1280x720 shows the join
panel (code, URLs, QR), the stuck list and the likely misconceptions without scrolling; one click in the
host's controls (at the top of their page) projects a misconception's explanation; the helpers' view works
on a phone, longest stuck first; everything participants wrote shows as text; a report shows on the page
within a fraction of a second (the page waits for changes instead of polling).

A room of 40 participants is made over plain HTTP, as the client posts (the room test, test_workshop_room.py,
runs real kernels). The projector's screenshot is the book's (book/_static/workshop_dashboard.png): run
with WORKSHOP_SCREENSHOT=1 to refresh it."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from tests.browser import CHROMIUM, open_browser
from tests.conftest import ROOT
from tests.test_workshop import COURSE, workshop_server

SCRIPT_SEAT = "<script>window.__pwned=1</script>"
SCREENSHOT = ROOT / "book" / "_static" / "workshop_dashboard.png"
RNN_CHECKS = ("runs", "losses", "lstm", "truncated", "carries state")

pytestmark = pytest.mark.slow


def room(server) -> dict:
    """40 participants: 14 with no_grad around +=, 8 with the bug unchanged, 5 with .data, 9 passed, 4 on
    rnn_hidden; the first three stuck (and the first stuck longest); one seat label is markup."""
    people = {}
    for i in range(40):
        seat = SCRIPT_SEAT if i == 1 else f"{'ABCDEF'[i % 6]}{i // 6 + 1}"
        person = people[seat] = server.join(seat=seat, source=f"127.0.4.{i + 1}")
        if i < 3:
            for _ in range(5 - i):
                assert person.report(grad_mode=False)[0] == 200
        elif i < 14:
            assert person.report(grad_mode=False)[0] == 200
        elif i < 22:
            assert person.report()[0] == 200
        elif i < 27:
            assert person.report(failing=("gradcheck",), error=None, op=None, grad_mode=None)[0] == 200
        elif i < 36:
            assert person.report(failing=())[0] == 200
        else:
            rnn = [{"name": c, "passed": c != "truncated"} for c in (*RNN_CHECKS, "caller's tensors unchanged")]
            assert person.report(exercise="rnn_hidden", checks=rnn, error=None, op=None, grad_mode=None)[0] == 200
    return people


def wait_until(page, expression: str, timeout: float = 15) -> None:
    """Polls `expression` with page.evaluate (over DevTools, which the page's CSP allows; Playwright's
    wait_for_function evaluates a string inside the page, which the CSP forbids)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"not true after {timeout} s: {expression}"
        time.sleep(0.05)


def in_view(page, selector: str, height: int) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["height"] > 0 and box["y"] >= 0 and box["y"] + box["height"] <= height


def test_the_projector_the_controls_and_a_phone(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium); CI installs it")
    with workshop_server(tmp_path, "--stuck-minutes", "0", "--exercises", "residual_add,rnn_hidden") as server:
        people = room(server)
        problems: list[str] = []
        with open_browser() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.goto(f"http://127.0.0.1:{server.port}/dashboard#token={server.host_token}")
            wait_until(page, "document.getElementById('participants').textContent.startsWith('40 here')")

            # the projector, at 720p: join panel, stuck and misconceptions above the fold
            assert page.text_content("#join-code") == server.code
            # the whole line to type, not only the URL
            line = f'check.join("http://127.0.0.1:{server.port}/{server.code}", seat="")'
            assert page.text_content("#join-urls") == line
            assert page.evaluate("!document.getElementById('qr').hidden")
            for box in ("#join", "#stuck-box", "#misconceptions-box"):
                assert in_view(page, box, 720), box
            assert page.eval_on_selector_all("#misconceptions li", "l => l.map(e => e.textContent)")[:3] == [
                "no_grad around +=: 14 (residual_add)", "the bug, unchanged: 8 (residual_add)",
                ".data add or detach cuts the graph: 5 (residual_add)"]
            assert page.text_content("#stuck") == "residual_add: 3 stuck"
            assert page.is_hidden("#helper") and SCRIPT_SEAT not in page.content()  # aggregates only
            assert server.helper_token not in page.content()  # the helpers' token is not on the projector

            # the host's controls: at the top of their page; one click projects the explanation
            controls = browser.new_page(viewport={"width": 1280, "height": 720})
            controls.goto(f"http://127.0.0.1:{server.port}/dashboard#view=controls&token={server.host_token}")
            button = controls.wait_for_selector("#control-misconceptions li:first-child button")
            assert in_view(controls, "#control-misconceptions li:first-child button", 720)
            assert server.helper_token in controls.text_content("#helpers-link")
            button.click()
            wait_until(page, "!document.getElementById('spotlight').hidden")
            assert page.text_content("#spotlight-title") == "no_grad around +="
            assert "version counter" in page.text_content("#spotlight-text")
            assert page.text_content("#spotlight-read").startswith("In the course: Chapter 6")
            for box in ("#join", "#stuck-box", "#misconceptions-box"):
                assert in_view(page, box, 720), box
            shot = tmp_path / "workshop_dashboard.png"
            page.screenshot(path=str(shot))
            if os.environ.get("WORKSHOP_SCREENSHOT") == "1":
                shutil.copyfile(shot, SCREENSHOT)

            # a report shows on the page at once: no poll interval to wait for
            version = int(page.evaluate("document.body.dataset.version"))
            assert people["B4"].report(failing=())[0] == 200
            wait_until(page, f"+document.body.dataset.version > {version}", timeout=30)  # catches a page that
            # never updates; how fast it updates is measured by benchmarks/workshop_load.py, not asserted here

            # a helper's phone: the helpers' view, longest stuck first, nothing wider than the screen
            phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
            phone.on("pageerror", lambda e: problems.append(str(e)))
            phone.goto(f"http://127.0.0.1:{server.port}/dashboard#view=helper&token={server.helper_token}")
            phone.wait_for_selector("#stuck-people li[data-seat]")
            seats = phone.eval_on_selector_all("#stuck-people li", "l => l.map(e => e.dataset.seat)")
            assert seats == ["A1", SCRIPT_SEAT, "C1"]
            assert in_view(phone, "#stuck-people li:first-child", 844)
            phone.screenshot(path=str(tmp_path / "phone.png"), full_page=True)
            assert phone.evaluate("document.documentElement.scrollWidth") <= 390
            assert phone.evaluate("window.__pwned") is None
            assert phone.evaluate("document.querySelectorAll('main script, main img').length") == 0
            assert phone.is_hidden("a[data-view=controls]")  # a helper cannot move the spotlight
    assert not problems, problems
    assert SCREENSHOT.exists(), "the book's screenshot: run once with WORKSHOP_SCREENSHOT=1"


def test_the_projector_keeps_its_spotlight_and_the_passes_of_the_gone_across_a_restart(tmp_path):
    # issue 33: the spotlight survives a restart like the rest of the room; gone never erases a pass
    from tests.test_workshop import start

    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium); CI installs it")
    first = start(tmp_path, "--port", "0", "--gone-minutes", "0.02", "--exercises", "residual_add,rnn_hidden")
    ada = first.join()
    assert ada.report(failing=())[0] == 200
    misconception = next(m for m in COURSE.by_id.values() if m.label == "no_grad around +=")
    assert first.host("spotlight", {"misconception": misconception.id}) == 204
    with open_browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"http://127.0.0.1:{first.port}/dashboard#token={first.host_token}")
        wait_until(page, "!document.getElementById('spotlight').hidden")
        first.stop()
        second = start(tmp_path, "--port", str(first.port), "--gone-minutes", "0.02", state=first.state_file,
                       name="second")
        try:
            wait_until(page, "document.getElementById('participants').textContent.startsWith('0 here')", 30)
            assert page.text_content("#spotlight-title") == "no_grad around +="
            assert page.text_content("#grid tbody tr[data-exercise=residual_add] .n-passed") == "1"
        finally:
            second.stop()


def test_the_join_panel_folds_to_its_line_once_the_room_has_joined(tmp_path):
    """Open while people join; once someone has joined and nobody for --fold-join-after seconds, folded to one
    line that still shows the line to type; a click opens it again, and that choice stands."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium); CI installs it")
    with workshop_server(tmp_path, "--fold-join-after", "1") as server, open_browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"http://127.0.0.1:{server.port}/dashboard#token={server.host_token}")
        wait_until(page, "document.body.dataset.polls !== undefined")
        assert page.evaluate("document.getElementById('join').open")  # nobody yet
        ada = server.join()
        time.sleep(1.2)
        assert ada.report()[0] == 200  # a change after the quiet second: the page draws again
        wait_until(page, "!document.getElementById('join').open")
        line = f'check.join("http://127.0.0.1:{server.port}/{server.code}")'
        assert page.text_content("#join-summary") == line and in_view(page, "#join-summary", 720)
        page.click("#join summary")
        wait_until(page, "document.getElementById('join').open")
        version = int(page.evaluate("document.body.dataset.version"))
        assert ada.report(failing=())[0] == 200
        wait_until(page, f"+document.body.dataset.version > {version}")
        assert page.evaluate("document.getElementById('join').open")  # the host's click stands
