"""`--fix`'s runs as forks of one warm interpreter (autograder/blame/fix/warm.py), attacked as a program under
repair could: what one run leaves behind, the descriptors it inherits, the interpreter it kills, a run that
never ends, an environment that changes between runs, an interpreter that cannot start. Each run tells what
it saw in the message of the error it raises (its recording keeps the first line of it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autograder.blame.fix import runs, warm
from autograder.blame.fix.runs import Program, record


@pytest.fixture(autouse=True)
def _warm_state_restored():
    """A test that makes the interpreter refuse or die leaves the next test (and file) a warm interpreter."""
    lost = warm._lost
    yield
    if warm._current is not None and (warm._current.refused or not warm._current.alive):
        warm._current.close()
        warm._current = None
    warm._lost = lost


def run(tmp_path: Path, text: str, timeout: float = 120) -> dict:
    folder = tmp_path / "project"
    folder.mkdir(exist_ok=True)
    script = folder / "train.py"
    script.write_text("# run from the text --fix hands over\n")
    return record(Program(str(script), (), str(folder), {str(script): text}), "plain", False, timeout)


def said(recording: dict) -> str:
    assert recording["error"] is not None, recording
    return recording["error"]["message"]


def test_nothing_one_run_does_to_the_interpreter_reaches_the_next(tmp_path):
    spoil = ("import sys, torch\ntorch.marker = 1\ntorch.set_grad_enabled(False)\n"
             "torch.set_default_dtype(torch.float64)\nsys.modules['json'] = None\nimport os\n"
             "os.environ['SPOILED'] = '1'\nraise RuntimeError('spoiled')\n")
    assert said(run(tmp_path, spoil)) == "spoiled"
    look = ("import os, sys, torch\nraise RuntimeError(repr((hasattr(torch, 'marker'), torch.is_grad_enabled(), "
            "str(torch.get_default_dtype()), sys.modules.get('json') is None, 'SPOILED' in os.environ)))\n")
    assert said(run(tmp_path, look)) == "(False, True, 'torch.float32', False, False)"


def test_a_run_holds_no_descriptor_but_its_three_and_leads_its_own_session(tmp_path):
    look = ("import os, sys\nfds = {}\nfor f in os.listdir('/proc/self/fd'):\n    try:\n"
            "        fds[int(f)] = os.readlink('/proc/self/fd/' + f)\n    except OSError:\n        pass\n"
            "raise RuntimeError(repr((fds, os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid(), "
            "sys.stdin.read())))\n")
    fds, leader, group, read = eval(said(run(tmp_path, look)))  # noqa: S307 - our own repr
    assert fds[0] == "/dev/null" and fds[1] == fds[2] and fds[1].endswith("/output.txt"), fds
    rest = {fd: target for fd, target in fds.items() if fd > 2}
    assert list(rest.values()) == [fds[1].replace("output.txt", "recording.pt")], fds  # gradients.py's own
    assert leader and group
    assert read == ""


def test_a_run_sees_its_own_environment_not_the_interpreters(tmp_path, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("COURSE_MARK", "one")
    look = ("import os, tempfile, sys\nraise RuntimeError(repr((os.environ.get('COURSE_MARK'), "
            "os.environ.get('OMP_NUM_THREADS'), tempfile.gettempdir() == os.environ['TMPDIR'], "
            "sys.dont_write_bytecode, sys.path[0] == os.getcwd() or sys.path[0])))\n")
    mark, threads, own_tmp, no_bytecode, _ = eval(said(run(tmp_path, look)))  # noqa: S307
    assert (mark, threads, own_tmp, no_bytecode) == ("one", None, True, True)
    first = warm._current
    monkeypatch.setenv("COURSE_MARK", "two")  # what a fresh Python reads at start changed: a new interpreter
    assert eval(said(run(tmp_path, look)))[0] == "two"  # noqa: S307
    assert warm._current is not first and first is not None and first.process.poll() is not None


def test_a_run_that_kills_the_interpreter_fails_alone_and_the_next_runs(tmp_path):
    kill = ("import os, signal, time\n"
            "if b'autograder.blame.fix.warm' not in open(f'/proc/{os.getppid()}/cmdline', 'rb').read():\n"
            "    raise RuntimeError('not forked')  # a fresh python's parent is the test's own process\n"
            "os.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(2)\n")
    assert said(run(tmp_path, kill)).startswith("it crashed (exit -9)")
    assert said(run(tmp_path, "raise RuntimeError('after')\n")) == "after"


def test_a_run_past_its_time_is_stopped_and_the_interpreter_goes_on(tmp_path):
    slow = "import time\ntime.sleep(60)\n"
    assert said(run(tmp_path, slow, timeout=2)) == "it ran longer than 2 s"
    assert said(run(tmp_path, "raise RuntimeError('next')\n")) == "next"


def test_a_run_cannot_speak_the_wire(tmp_path):
    """A run that writes the interpreter's answers on every descriptor it has but its recording reaches nobody:
    its own verdict is its error, and the next run's answer is the next run's."""
    forge = textwrap.dedent("""\
        import os
        for fd in range(64):
            try:
                if not os.readlink(f"/proc/self/fd/{fd}").endswith("recording.pt"):
                    os.write(fd, b'{"status": 0}\\n{"pid": 1}\\n{"ready": true}\\n')
            except OSError:
                pass
        raise RuntimeError("forged")
        """)
    assert said(run(tmp_path, forge)) == "forged"
    assert said(run(tmp_path, "raise RuntimeError('honest')\n")) == "honest"


def test_a_run_that_writes_over_its_recording_fails_with_words(tmp_path):
    spoil = "import os\nos.write(3, b'not a recording')\n"  # gradients.py holds its recording open as fd 3
    assert said(run(tmp_path, spoil)).startswith("it wrote over its own recording (")


def test_where_there_is_no_warm_interpreter_each_run_is_a_fresh_python(tmp_path, monkeypatch):
    monkeypatch.setattr(warm.Interpreter, "start", lambda self, *a: None)
    look = "import sys\nraise RuntimeError(sys.argv[0].rsplit('/', 1)[-1] + ' ' + repr(sys.orig_argv[1:3]))\n"
    assert said(run(tmp_path, look)) == "train.py ['-m', 'autograder.blame.fix.gradients']"


def test_an_interpreter_that_is_not_alone_is_not_used(monkeypatch, tmp_path):
    """A fork copies one thread: where torch's import left another, the interpreter says it is not ready, and
    runs start cold."""
    monkeypatch.setattr(warm, "ALONE_ENVIRONMENT", {})
    monkeypatch.setenv("OMP_NUM_THREADS", "4")  # a thread pool at import
    interpreter = warm.interpreter(runs._environment())
    assert interpreter is not None
    started = interpreter.start(["--help"], str(tmp_path), dict(os.environ), str(tmp_path / "out.txt"))
    if started is not None:  # this torch started no pool at import: the check had nothing to refuse
        started.reap()
        pytest.skip("torch's import started no thread here")
    assert not interpreter.alive and interpreter.process.poll() is not None


def test_runs_leave_no_process_behind(tmp_path):
    marker = f"warm-left-{os.getpid()}"
    text = (f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', "
            f"'{marker}'])\nraise RuntimeError('left a child')\n")
    assert said(run(tmp_path, text)) == "left a child"
    from tests.test_blame_safety import left_running

    assert left_running(marker) == {}
    interpreter = warm._current
    assert interpreter is not None and interpreter.process.poll() is None
    interpreter.close()
    assert interpreter.process.returncode == -signal.SIGKILL or interpreter.process.returncode == 0
    assert sys.platform.startswith("linux")


def test_a_run_that_stops_the_interpreter_costs_its_time_limit_not_the_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(warm, "REAP_TIMEOUT", 2.0)  # the wait is the same at any length; 10 s of it here is idle
    stop = "import os, signal, time\nos.kill(os.getppid(), signal.SIGSTOP)\ntime.sleep(60)\n"
    started = time.monotonic()
    assert said(run(tmp_path, stop, timeout=3)) == "it ran longer than 3 s"
    assert time.monotonic() - started < 3 + warm.REAP_TIMEOUT + 10  # the stopped interpreter is given up
    assert said(run(tmp_path, "raise RuntimeError('after')\n")) == "after"


def test_a_forged_answer_on_the_interpreters_own_output_kills_nothing_and_puts_the_wire_back(tmp_path):
    """A run's child (no audit hook sees it) writes the interpreter's answers on the interpreter's own output,
    naming a process of this test's: that process lives, and the runs after it get their own answers."""
    bystander = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        forge = textwrap.dedent(f"""\
            import os, subprocess
            line = '{{"status": 0}}\\\\n{{"pid": {bystander.pid}}}\\\\n{{"status": 0}}\\\\n'
            subprocess.run(["sh", "-c", f"printf '{{line}}' > /proc/{{os.getppid()}}/fd/1"], check=True)
            raise RuntimeError("forged")
            """)
        run(tmp_path, forge)  # its own verdict may be the forged one: it is the script's own run
        for word in ("one", "two", "three"):
            assert said(run(tmp_path, f"raise RuntimeError('{word}')\n")) == word
        assert bystander.poll() is None  # never signalled
    finally:
        bystander.kill()
        bystander.wait()


def test_what_the_first_run_sets_in_the_environment_reaches_no_later_run(tmp_path, monkeypatch):
    """--fix keeps the environment it started in (runs.warm_up): the script's first run, in --fix's own process,
    may set variables; the later runs start from the user's environment, as the first did, in the same warm
    interpreter."""
    monkeypatch.delenv("SET_BY_THE_FIRST_RUN", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the user's own: each run still gets one of its own
    runs.warm_up()
    try:
        before = warm._current
        os.environ["SET_BY_THE_FIRST_RUN"] = "1"  # as the first run, in this process, might
        look = "import os\nraise RuntimeError(repr(os.environ.get('SET_BY_THE_FIRST_RUN')))\n"
        assert said(run(tmp_path, look)) == "None"
        assert warm._current is before
    finally:
        runs.cool_down()
        del os.environ["SET_BY_THE_FIRST_RUN"]
