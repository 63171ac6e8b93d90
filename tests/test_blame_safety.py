"""`autograder blame --fix` never loses a line of the user's work: each case is done for real (two processes at
once, real signals, an edit saved mid-run, a read-only file, a script that moves or writes files, a background
child), and the user's bytes are checked afterwards. The cases that are not about processes run the command's
main() in the test's process (in_process); every run --fix makes is a process of its own in all of them."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_blame_fix import blame_in_process

pytestmark = pytest.mark.slow

SLOW = """\
import time

import torch

time.sleep({pause})  # every run of the script takes a while: time to act while --fix works
x = torch.ones(3, requires_grad=True)
h = torch.relu(x * 2.0)
h += 1
h.sum().backward()
"""
FIXED_LINE = ("h += 1\n", "h = h + 1\n")


def env(tmp_path: Path) -> dict[str, str]:
    """The command's environment: its temporary files and its locks in folders of the test's own."""
    for name in ("tmp", "run"):
        (tmp_path / name).mkdir(exist_ok=True)
    return {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path / "tmp"),
            "XDG_RUNTIME_DIR": str(tmp_path / "run")}


def start(*args: str, cwd: Path, tmp_path: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "autograder.blame.fix.script", *args], cwd=cwd, env=env(tmp_path),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def in_process(*args: str, cwd: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    """The command by its main() in this process, in env(tmp_path) (tests/test_blame_fix.py's blame_in_process):
    for the cases about the user's bytes, not about processes; each run --fix makes is still a fresh Python."""
    return blame_in_process(*args, cwd=cwd, env=env(tmp_path))


def wait_for(process: subprocess.Popen, words: str) -> list[str]:
    """The lines the process printed up to the first that holds `words` (all of them if it ends first)."""
    seen = []
    for line in process.stdout:
        seen.append(line)
        if words in line:
            break
    return seen


def finish(process: subprocess.Popen, seen: list[str] = ()) -> str:
    rest, _ = process.communicate(timeout=600)
    return "".join(seen) + rest


def project(tmp_path: Path, text: str, name: str = "train.py") -> tuple[Path, bytes]:
    folder = tmp_path / "project"
    folder.mkdir()
    script = folder / name
    script.write_bytes(text.encode())
    return script, script.read_bytes()


def left_running(marker: str) -> dict[int, str]:
    """{pid: command line} of the processes still running whose command line or starting environment holds
    `marker` (no zombies): a run forked by the warm interpreter has its command line and its environment."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            environ = (proc / "environ").read_bytes().decode(errors="replace")
            status = (proc / "status").read_text()
        except OSError:
            continue
        if (marker in cmdline or marker in environ) and "State:\tZ" not in status and proc.name != str(os.getpid()):
            found[int(proc.name)] = cmdline
    return found


def test_two_fix_runs_on_one_file_the_second_stops_and_the_first_fixes(tmp_path):
    script, original = project(tmp_path, SLOW.format(pause=2))
    first = start("--fix", script.name, cwd=script.parent, tmp_path=tmp_path)
    seen = wait_for(first, "running the reference")  # the first holds the lock and is verifying
    second = subprocess.run([sys.executable, "-m", "autograder.blame.fix.script", "--fix", script.name],
                            cwd=script.parent, env=env(tmp_path), capture_output=True, text=True, timeout=600)
    assert second.returncode == 4, second.stdout + second.stderr
    assert "another `autograder blame --fix`" in second.stderr and "nothing was run or written" in second.stderr
    out = finish(first, seen)
    assert first.returncode == 0, out[-3000:]
    assert script.read_bytes() == original.replace(*[s.encode() for s in FIXED_LINE])
    assert (script.parent / "train.py.orig").read_bytes() == original
    assert sorted(p.name for p in script.parent.iterdir()) == ["train.py", "train.py.orig"]


def test_a_script_that_copies_itself_and_changes_folder_gets_its_own_file_fixed(tmp_path):
    text = ("import os\nimport shutil\n\nimport torch\n\nos.makedirs('elsewhere', exist_ok=True)\n"
            "shutil.copy(__file__, 'elsewhere/train.py')\nos.chdir('elsewhere')\n" + SLOW.format(pause=0))
    script, original = project(tmp_path, text)
    done = in_process("--fix", "--json", script.name, cwd=script.parent, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    fix = json.loads(done.stdout)["fix"]
    assert fix["file"] == "train.py" and fix["backup"] == "train.py.orig"
    assert script.read_bytes() == original.replace(*[s.encode() for s in FIXED_LINE])
    assert (script.parent / "train.py.orig").read_bytes() == original
    elsewhere = script.parent / "elsewhere"  # the copy the script made of itself (on its first run) is untouched
    assert sorted(p.name for p in elsewhere.iterdir()) == ["train.py"]
    assert (elsewhere / "train.py").read_bytes() == original


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_during_verification_leaves_the_file_as_it_was_and_stops_every_run(signum, tmp_path):
    script, original = project(tmp_path, SLOW.format(pause=3))
    process = start("--fix", script.name, cwd=script.parent, tmp_path=tmp_path)
    seen = wait_for(process, "trying (")  # a rewrite is being verified
    process.send_signal(signum)
    out = finish(process, seen)
    assert process.returncode == 128 + signum, out[-3000:]
    assert f"stopped by {signal.Signals(signum).name}; no file was changed" in out
    assert script.read_bytes() == original
    assert sorted(p.name for p in script.parent.iterdir()) == ["train.py"]
    assert left_running(str(script)) == {}  # the verification run was stopped with --fix
    assert left_running(str(tmp_path)) == {}  # and so was the warm interpreter it was forked from (env(tmp_path))
    assert list((tmp_path / "tmp").iterdir()) == []  # and its scratch folder removed


def test_an_edit_saved_while_fix_runs_is_kept_and_nothing_is_written(tmp_path):
    script, original = project(tmp_path, SLOW.format(pause=2))
    process = start("--fix", script.name, cwd=script.parent, tmp_path=tmp_path)
    seen = wait_for(process, "trying (")
    edited = original + b"print('my edit, saved while --fix ran')\n"
    script.write_bytes(edited)
    out = finish(process, seen)
    assert process.returncode == 4, out[-3000:]
    assert "train.py changed while --fix ran: your version is kept, and nothing was written" in out
    assert "h = h + 1" in out  # the verified rewrite is still shown, for the user to apply
    assert script.read_bytes() == edited
    assert sorted(p.name for p in script.parent.iterdir()) == ["train.py"]


def test_a_file_that_cannot_be_written_is_refused_cleanly(tmp_path):
    script, original = project(tmp_path, SLOW.format(pause=0))
    script.chmod(0o444)
    done = in_process("--fix", script.name, cwd=script.parent, tmp_path=tmp_path)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "Not fixed: cannot write train.py: it is read-only" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert script.read_bytes() == original and stat.S_IMODE(script.stat().st_mode) == 0o444
    assert sorted(p.name for p in script.parent.iterdir()) == ["train.py"]


def test_a_byte_order_mark_and_crlf_line_ends_are_kept(tmp_path):
    script, _ = project(tmp_path, "")
    original = b"\xef\xbb\xbf" + SLOW.format(pause=0).replace("\n", "\r\n").encode()
    script.write_bytes(original)
    done = in_process("--fix", script.name, cwd=script.parent, tmp_path=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert script.read_bytes() == original.replace(b"h += 1\r\n", b"h = h + 1\r\n")
    assert (script.parent / "train.py.orig").read_bytes() == original


def test_files_the_script_writes_are_changed_by_its_first_run_only(tmp_path):
    """The first run is the user's (as `python train.py`); the reference and verification runs write into
    scratch folders: the checkpoint stays float32 and the log gets one line."""
    text = ("import torch\n\nwith open('log.txt', 'a') as log:\n    log.write('run\\n')\n"
            "torch.save({'w': torch.ones(2)}, 'ckpt.pt')\n" + SLOW.format(pause=0))
    script, _ = project(tmp_path, text)
    (script.parent / "log.txt").write_text("before\n")
    done = in_process("--fix", script.name, cwd=script.parent, tmp_path=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (script.parent / "log.txt").read_text() == "before\nrun\n"
    import torch

    assert torch.load(script.parent / "ckpt.pt")["w"].dtype == torch.float32  # not the float64 reference's


def test_a_write_outside_the_scratch_folder_fails_the_run_not_the_users_file(tmp_path):
    """A verification run may not write next to the script through `__file__` (that is the user's folder)."""
    text = ("from pathlib import Path\n\nimport torch\n\n"
            "Path(__file__).with_name('out.txt').write_text('written by a run')\n" + SLOW.format(pause=0))
    script, original = project(tmp_path, text)
    done = in_process("--fix", script.name, cwd=script.parent, tmp_path=tmp_path)
    assert done.returncode == 3, done.stdout[-3000:]
    assert "writes only in its scratch folder" in done.stdout
    assert script.read_bytes() == original
    assert sorted(p.name for p in script.parent.iterdir()) == ["out.txt", "train.py"]  # out.txt: the first run's


def test_stdin_and_a_background_child_do_not_keep_fix_waiting(tmp_path):
    marker = f"blame-background-child-{os.getpid()}"
    text = ("import subprocess\nimport sys\n\nimport torch\n\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', '{marker}'])\n"
            "print('read', repr(sys.stdin.read()))\n" + SLOW.format(pause=0))
    script, original = project(tmp_path, text)
    log = tmp_path / "output.txt"
    started = time.monotonic()
    with open(log, "w") as out:  # a file: the first run's child keeps its output open, as under `python`
        code = subprocess.call([sys.executable, "-m", "autograder.blame.fix.script", "--fix", "--timeout", "120",
                                script.name], cwd=script.parent, env=env(tmp_path), stdin=subprocess.DEVNULL,
                               stdout=out, stderr=subprocess.STDOUT, timeout=600)
    took = time.monotonic() - started
    try:
        assert code == 0, log.read_text()[-3000:]
        assert took < 300  # no run waited for the sleeping child, nor for its time limit
        assert len(left_running(marker)) <= 1  # the first run's own child (as `python train.py` leaves it)
        assert script.read_bytes() == original.replace(*[s.encode() for s in FIXED_LINE])
    finally:
        for pid in left_running(marker):  # the child this test's script started, by its id
            os.kill(pid, signal.SIGKILL)
