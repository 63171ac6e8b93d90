"""The teachers' reference pages, run as written (tests/test_run_a_class.py does book/reference/run_a_class.md).

- book/reference/platforms.md: every shell block, in the order the page gives them, each in its own bash, in a
  clean folder that holds what the folder of a teacher's copy of the course holds (the sample class and its
  rosters, and `.venv` after `scripts/install`), with no AUTOGRADER_SALT but what the page sets.
- book/reference/workshop.md: each shell block is one of three kinds, by the MyST comment line just before it:
  `% follow: ...` (tests/test_workshop_book.py runs it with the participants' lines and compares its output),
  `% not run: REASON` (not run, and the page says why), or neither: run here, in a fresh home folder. A command
  that starts a server (`autograder workshop serve`) is run until its first lines say it serves, on a free port
  (`--port` added, as tests/test_workshop_book.py does, since 8765 may be in use on a test machine), then
  stopped with Ctrl-C (SIGINT), which must end it cleanly.

The blocks are read with markdown-it (the parser MyST uses), never with a pattern of our own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.conftest import ROOT

REFERENCE = ROOT / "book" / "reference"
PLATFORMS = REFERENCE / "platforms.md"
WORKSHOP = REFERENCE / "workshop.md"
COMMENT = re.compile(r"^% (?P<kind>follow|not run): *(?P<what>.*)$")


def blocks(page: Path) -> list[tuple[str, str | None, str]]:
    """(the block's commands, the kind its comment line gives it or None, what follows the kind) for each shell
    block of the page, in order."""
    lines = page.read_text().splitlines()
    found = []
    for token in MarkdownIt("commonmark").parse(page.read_text()):
        if token.type == "fence" and token.info.strip() == "bash":
            before = lines[token.map[0] - 1] if token.map[0] > 0 else ""
            comment = COMMENT.match(before)
            found.append((token.content.strip(), comment["kind"] if comment else None,
                          comment["what"].strip() if comment else ""))
    return found


def environment(home: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_SALT" and not k.startswith("XDG_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    if home is not None:
        env["HOME"] = str(home)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_every_export_on_the_platforms_page_has_a_salt():
    """`autograder export` stops without AUTOGRADER_SALT: each block that exports sets it first (or asks for the
    public salt on purpose)."""
    exporting = [code for code, _, _ in blocks(PLATFORMS) if "autograder export" in code]
    assert len(exporting) == 2
    for code in exporting:
        exported = False  # an `export AUTOGRADER_SALT=...` line before, in the same shell
        for line in code.splitlines():
            exported = exported or line.startswith("export AUTOGRADER_SALT=")
            if "autograder export" in line:
                inline = "AUTOGRADER_SALT=" in line.split("autograder export")[0]
                assert exported or inline or "--public-salt" in line, line


def test_every_workshop_block_is_run_somewhere_or_says_why_not():
    found = blocks(WORKSHOP)
    assert found and all(kind != "not run" or what for _, kind, what in found)  # a reason, always
    followed = [code for code, kind, _ in found if kind == "follow"]
    assert followed and (ROOT / "tests" / "test_workshop_book.py").is_file()
    assert [code for code, kind, _ in found if kind is None]  # at least the tunnel's command runs here


@pytest.mark.slow
def test_the_platforms_page_runs_as_written(tmp_path):
    shutil.copytree(ROOT / "samples", tmp_path / "samples", ignore=shutil.ignore_patterns("*.py"))
    (tmp_path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    env = environment()
    for code, _, _ in blocks(PLATFORMS):
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, (code, done.stdout[-3000:], done.stderr[-3000:])

    assert (tmp_path / "gs" / "autograder.zip").is_file() and (tmp_path / "gs-residual" / "autograder.zip").is_file()
    gradescope = json.loads((tmp_path / "ag" / "results" / "results.json").read_text())
    assert gradescope["tests"] and "score" in gradescope
    prairielearn = json.loads((tmp_path / "grade" / "results" / "results.json").read_text())
    assert prairielearn["gradable"] is True and 0 <= prairielearn["score"] <= 1
    assert (tmp_path / "pl" / "questions").is_dir()
    assert (tmp_path / "grades" / "report" / "index.html").is_file()
    assert (tmp_path / "grades" / "report" / "gradebook_canvas.csv").is_file()
    students = sorted(p.name for p in (tmp_path / "samples" / "class").iterdir())
    assert sorted(p.name for p in (tmp_path / "feedback").iterdir() if p.is_dir()) == students


@pytest.mark.slow
def test_the_workshop_pages_other_commands_run(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = environment(home)
    for code, kind, _ in blocks(WORKSHOP):
        if kind is not None:
            continue
        if not code.startswith("autograder workshop serve"):
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, (code, done.stdout[-3000:], done.stderr[-3000:])
            continue
        log = tmp_path / "serve.log"
        server = subprocess.Popen(["bash", "-c", f"exec {code} --port {free_port()} --no-qr"], cwd=tmp_path, env=env,
                                  stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while "Workshop server running" not in log.read_text():
                assert server.poll() is None and time.monotonic() < deadline, (code, log.read_text())
                time.sleep(0.1)
            time.sleep(0.5)
            assert server.poll() is None, (code, log.read_text())
        finally:
            server.send_signal(signal.SIGINT)
            rc = server.wait(timeout=60)
        assert rc == 0, (code, log.read_text())
        assert "--public-url" not in code or re.search(r"--public-url (\S+)", code)[1] in log.read_text()
