"""Open a folder of HTML in a real browser, without the network: serve it on localhost and visit pages
with Playwright driving Debian's Chromium (never a browser Playwright downloads).

    from tests.browser import CHROMIUM, serve, open_browser, visit

    with serve(Path("book/_build/html")) as base, open_browser() as browser:
        report = visit(browser, base + "index.html", screenshot=Path("shot.png"))
        assert report.ok, report.problems()

`visit` returns what a page did wrong on its own: console errors, uncaught page errors, requests that
failed or got an HTTP error, images that did not load. Checks that depend on the site (which links
must exist, which tracebacks are expected) belong to the caller, which gets the page's links, ids and
the live `page` through `inspect`. Requests that leave 127.0.0.1 are blocked and reported.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's Chromium (`apt-get install -y chromium`)."""

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A browser that closes a connection early (a page left before an asset finished) is not an error.
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve `folder` on 127.0.0.1 at a free port, in a thread; yield the base URL (ends with '/')."""
    if not folder.is_dir():
        raise FileNotFoundError(f"nothing to serve: {folder} is not a folder")
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="serve " + folder.name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextmanager
def open_browser(executable: Path = CHROMIUM) -> Iterator[Any]:
    """A headless Chromium (Playwright `Browser`) that is closed, with its processes, on exit."""
    if not executable.exists():
        raise FileNotFoundError(f"{executable} not found: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class PageReport:
    """What one visit saw. `links` are absolute URLs of `a[href]`; `ids` the page's element ids."""

    url: str
    status: int | None = None
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    broken_images: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    extra: Any = None

    def problems(self) -> list[str]:
        found = [f"HTTP {self.status}"] if self.status is not None and self.status >= 400 else []
        found += [f"console error: {m}" for m in self.console_errors]
        found += [f"page error: {m}" for m in self.page_errors]
        found += [f"request failed: {m}" for m in self.failed_requests]
        found += [f"image did not load: {m}" for m in self.broken_images]
        return found

    @property
    def ok(self) -> bool:
        return not self.problems()


def visit(browser: Any, url: str, screenshot: Path | None = None,
          inspect: Callable[[Any], Any] | None = None, timeout_ms: int = 30_000,
          wait_until: str = "networkidle", full_page: bool = False) -> PageReport:
    """Load `url` in a fresh page, wait for the network to go quiet, and report what went wrong.

    `inspect(page)`, if given, runs on the loaded page and its result is kept in `report.extra`.
    `wait_until="load"` spares the half second of quiet that "networkidle" waits for, for pages that fetch
    nothing after loading (self-contained ones); `full_page` screenshots the whole page, not the viewport.
    """
    report = PageReport(url)
    host = urlsplit(url).netloc
    page = browser.new_page()
    try:
        def block(r):
            report.failed_requests.append(f"blocked (leaves localhost): {r.request.url}")
            r.abort()

        # Only what leaves the page's host is stopped: Chromium matches the pattern itself, so the page's own
        # requests never wait on this Python process (routing every request through it cost a second a page).
        page.route(re.compile(rf"^(?!https?://{re.escape(host)}/)(?!data:)(?!blob:)"), block)
        page.on("console", lambda m: report.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: report.page_errors.append(str(e)))
        page.on("requestfailed", lambda r: report.failed_requests.append(f"{r.url} ({r.failure})")
                if urlsplit(r.url).netloc == host else None)
        page.on("response", lambda r: report.failed_requests.append(f"{r.url} (HTTP {r.status})")
                if r.status >= 400 else None)
        response = page.goto(url, wait_until=wait_until, timeout=timeout_ms)
        report.status = response.status if response else None
        report.broken_images = page.eval_on_selector_all(
            "img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.currentSrc || i.src)")
        report.links = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
        report.ids = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
        if inspect is not None:
            report.extra = inspect(page)
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=full_page)
    finally:
        page.close()
    return report
