"""What a submission writes reaches a teacher's terminal as text, never as terminal commands: an exception
message with escape sequences (a window title, a clipboard write, a fake "[PASS] 10/10" drawn over the real
line) checked with `autograder check --sandbox` (a file that is not one's own) shows each control character
visibly, through the real sandbox."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.adversarial.conftest import needs_sandbox
from tests.conftest import ROOT

FORGES = ("\x1b]0;graded: PASS\x07", "\x1b]52;c;ZWNobyBvd25lZA==\x07", "\r\x1b[2K[PASS] 10/10 Every check passed.",
          "\u202eevil")
ATTACK = ("def clamped_softmax_loss(logits, target, eps):\n"
          f"    raise RuntimeError({''.join(FORGES)!r})\n")


@needs_sandbox
@pytest.mark.slow
def test_an_exceptions_escape_sequences_are_shown_not_obeyed(tmp_path):
    path = tmp_path / "data_trap_attack.py"
    path.write_text(ATTACK)
    done = subprocess.run([sys.executable, "-m", "autograder", "check", str(path), "--sandbox", "--exercise",
                           "data_trap"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "raised RuntimeError" in done.stdout, done.stdout + done.stderr
    for raw in ("\x1b", "\x07", "\r", "\u202e"):
        assert raw not in done.stdout and raw not in done.stderr
    assert "\\x1b]0;graded: PASS\\x07" in done.stdout and "\\r\\x1b[2K[PASS] 10/10" in done.stdout
