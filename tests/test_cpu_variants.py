"""The shipped public data and the self-check hold on any CPU: the public-data tests (drift, read-back, check()
on every solution without references) run again in fresh processes under each instruction set torch can
be told to use (ATEN_CPU_CAPABILITY) and with 1 and 2 threads. float32 rounds differently under each; a
comparison at a tolerance its dtype does not deserve fails here, not on a learner's machine.

For each instruction set one process imports torch (under it) and the libraries pytest's plugins load, then
forks one pytest run per thread count: tests/conftest.py, imported in each fork, sets the count from
OMP_NUM_THREADS, and nothing was computed before the fork."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

VARIANTS = [(capability, threads) for capability in ("", "default", "avx2") for threads in (1, 2)]
"""'' is the machine's own best (AVX-512 here); default is no vector instructions."""

RUNS = r'''
import json, os, sys
import hypothesis, jupyter_client, nbformat, pytest, torch  # imported once, before the forks; nothing computed

folder, statuses = sys.argv[1], {}
for threads in sys.argv[2:]:
    pid = os.fork()
    if pid == 0:
        log = os.open(os.path.join(folder, f"{threads}.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.environ["OMP_NUM_THREADS"] = threads
        code = pytest.main(["tests/test_public_data.py", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                            "-W", "ignore::UserWarning"])
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(code))
    statuses[threads] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(statuses))
'''


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """capability -> threads -> (exit status, what pytest printed), each capability's runs made once."""
    made: dict[str, dict[int, tuple[int, str]]] = {}

    def of(capability: str) -> dict[int, tuple[int, str]]:
        if capability not in made:
            folder = tmp_path_factory.mktemp(capability or "own")
            env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "PYTEST_XDIST_WORKER")}
            env["OMP_NUM_THREADS"] = "1"  # each fork sets its own before it imports tests/conftest.py
            if capability:
                env["ATEN_CPU_CAPABILITY"] = capability
            threads = sorted({t for c, t in VARIANTS if c == capability})
            done = subprocess.run([sys.executable, "-c", RUNS, str(folder), *map(str, threads)], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
            statuses = json.loads(done.stdout)
            made[capability] = {t: (statuses[str(t)], Path(folder, f"{t}.txt").read_text()) for t in threads}
        return made[capability]

    return of


@pytest.mark.slow
@pytest.mark.parametrize(("capability", "threads"), VARIANTS,
                         ids=[f"{c or 'own'}-{t}threads" for c, t in VARIANTS])
def test_public_data_and_self_check_hold_on_this_cpu_variant(runs, capability, threads):
    status, printed = runs(capability)[threads]
    assert status == 0, printed[-6000:]
    assert " passed" in printed.splitlines()[-1]
